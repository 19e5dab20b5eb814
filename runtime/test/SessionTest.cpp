//===- SessionTest.cpp - A session's world and its threads ----------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What a session makes once: its world and one thread per rank. Runs of
// programs are tested where programs are compiled (test/Integration/
// session-world.test); here, what needs no program.
//
//===----------------------------------------------------------------------===//

#include "tprt/tprt.h"

#include "gtest/gtest.h"

#include <cstring>
#include <dirent.h>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

int countThreads() {
  int n = 0;
  if (DIR *dir = opendir("/proc/self/task")) {
    while (dirent *entry = readdir(dir))
      n += entry->d_name[0] != '.';
    closedir(dir);
  }
  return n;
}

TEST(SessionTest, ThreadsLiveAsLongAsTheSession) {
  int before = countThreads();
  if (before == 0)
    GTEST_SKIP() << "no /proc/self/task to count threads in";
  tprt_mesh mesh{2, {2, 3}};
  tprt_session *session = nullptr;
  tprt_status status = tprt_session_create(&mesh, nullptr, &session);
  ASSERT_EQ(status, nullptr) << tprt_status_message(status);
  EXPECT_EQ(countThreads(), before + 6);
  tprt_session_destroy(session);
  EXPECT_EQ(countThreads(), before);
}

// On a machine that limits a user's threads, a mesh larger than the limit is
// an error status naming the rank that could not start, not std::terminate
// (which is what a thrown std::system_error in a vector of joinable threads
// used to give); the threads that did start are joined, and a session that
// fits is made after it.
TEST(SessionTest, ThreadLimitIsAnErrorStatus) {
  if (geteuid() != 0)
    GTEST_SKIP() << "needs root, to become an unprivileged user whose "
                    "threads the kernel limits (root's are not)";
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // 65534: nobody, who runs nothing else here.
    if (setgid(65534) != 0 || setuid(65534) != 0)
      _exit(10);
    rlimit limit = {64, 64};
    if (setrlimit(RLIMIT_NPROC, &limit) != 0)
      _exit(11);
    tprt_mesh mesh{1, {4096}};
    tprt_session *session = nullptr;
    tprt_status status = tprt_session_create(&mesh, nullptr, &session);
    if (!status || session)
      _exit(12);
    if (tprt_status_code(status) != TPRT_UNAVAILABLE)
      _exit(13);
    std::string message = tprt_status_message(status);
    tprt_status_free(status);
    if (message.find("cannot start the thread of rank ") != 0 ||
        message.find(" of 4096: ") == std::string::npos ||
        message.find("ulimit -u") == std::string::npos)
      _exit(14);
    tprt_mesh small{1, {4}};
    if (tprt_session_create(&small, nullptr, &session))
      _exit(15);
    tprt_session_destroy(session);
    _exit(0);
  }
  int wstatus = 0;
  ASSERT_EQ(waitpid(child, &wstatus, 0), child);
  ASSERT_TRUE(WIFEXITED(wstatus))
      << "the child died, signal "
      << (WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0);
  EXPECT_EQ(WEXITSTATUS(wstatus), 0)
      << "10-11: could not become nobody with a thread limit; 12: the "
         "session was made; 13: another code; 14: another message; 15: a "
         "small session failed after it";
}

} // namespace
