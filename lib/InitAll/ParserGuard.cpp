//===- ParserGuard.cpp - Inputs that would crash MLIR 22's parser ---------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Nesting: brackets ( [ { < nested deeper than 512 levels are refused, since
// the recursive-descent parser would overflow its stack on them.
//
// A forward scan with MLIR's lexical rules (comments, strings, prefixed and
// bare identifiers) that finds each `permutation` / `dimensions` keyword
// that follows the `outs(...)` of a linalg.transpose, linalg.broadcast or
// linalg.reduce in custom form, and checks the list after its `=` with the
// grammar of DenseI64ArrayAttr::parse: `[` ( element (`,` element)* )? `]`,
// an element being `true`, `false`, or an optionally negated decimal or
// `0x` hexadecimal integer that fits in 64 signed bits. Comments and
// whitespace may stand between any two tokens.
//
//===----------------------------------------------------------------------===//

#include "tp/ParserGuard.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <cstdint>

using namespace mlir::tp;
using llvm::SmallVector;
using llvm::SmallVectorImpl;
using llvm::StringRef;

namespace {

/// The character classes the scan needs, one table lookup each (the scan
/// runs over every byte of every input before it is parsed).
enum : uint8_t {
  kIdStartClass = 1,  // [a-zA-Z_]
  kIdCharClass = 2,   // [a-zA-Z0-9_$.]
  kSpaceClass = 4,    // space, tab, newline, carriage return
  kPrefixedClass = 8, // what follows % @ ^ # !: an identifier char or '-'
};
constexpr std::array<uint8_t, 256> makeClasses() {
  std::array<uint8_t, 256> classes{};
  for (unsigned c = 0; c < 256; ++c) {
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    bool digit = c >= '0' && c <= '9';
    uint8_t k = 0;
    if (alpha || c == '_')
      k |= kIdStartClass;
    if (alpha || digit || c == '_' || c == '$' || c == '.')
      k |= kIdCharClass | kPrefixedClass;
    if (c == '-')
      k |= kPrefixedClass;
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
      k |= kSpaceClass;
    classes[c] = k;
  }
  return classes;
}
constexpr std::array<uint8_t, 256> kClasses = makeClasses();
bool is(char c, uint8_t cls) {
  return kClasses[static_cast<unsigned char>(c)] & cls;
}
bool isIdStart(char c) { return is(c, kIdStartClass); }
bool isIdChar(char c) { return is(c, kIdCharClass); }

class Scanner {
public:
  explicit Scanner(StringRef text) : text(text) {}

  std::optional<ParserHazard> run() {
    StringRef lastOp;
    char lastPunct = 0;
    while (true) {
      skipTrivia();
      if (pos >= text.size())
        return std::nullopt;
      char c = text[pos];
      if (c == '"') {
        size_t start = pos;
        skipString();
        // The generic form of the one op checked by attribute.
        if (text.slice(start, pos) == "\"tensor.concat\"")
          lastOp = "tensor.concat";
        lastPunct = 0;
        continue;
      }
      if (c == '%' || c == '@' || c == '^' || c == '#' || c == '!') {
        // A prefixed identifier (value, symbol, block, attribute or type
        // alias, dialect type): never an op name.
        ++pos;
        while (pos < text.size() && is(text[pos], kPrefixedClass))
          ++pos;
        // An insertvalue's or extractvalue's position list follows its
        // aggregate value.
        if (c == '%' &&
            (lastOp == "llvm.insertvalue" || lastOp == "llvm.extractvalue")) {
          size_t after = pos;
          skipTrivia();
          if (pos < text.size() && text[pos] == '[') {
            if (auto hazard = checkPositions(lastOp))
              return hazard;
          }
          pos = after;
        }
        lastPunct = 0;
        continue;
      }
      if (llvm::isDigit(c)) {
        while (pos < text.size() && (isIdChar(text[pos])))
          ++pos;
        lastPunct = 0;
        continue;
      }
      if (isIdStart(c)) {
        size_t start = pos;
        bool dotted = false;
        while (pos < text.size() && isIdChar(text[pos]))
          dotted |= text[pos++] == '.';
        StringRef word = text.slice(start, pos);
        if (dotted) {
          lastOp = word;
          operandElements.clear();
        } else if (word == "dim" && lastOp == "tensor.concat") {
          if (auto hazard = checkConcatDim())
            return hazard;
        } else if ((word == "ins" || word == "outs") &&
                   (lastOp == "linalg.batch_matmul" ||
                    lastOp == "linalg.batch_reduce_matmul")) {
          if (auto hazard = checkElementTypes(word == "outs", lastOp))
            return hazard;
        } else if (lastPunct == ')' &&
                   (word == "permutation" || word == "dimensions") &&
                   (lastOp == "linalg.transpose" ||
                    lastOp == "linalg.broadcast" ||
                    lastOp == "linalg.reduce")) {
          size_t after = pos;
          skipTrivia();
          if (pos < text.size() && text[pos] == '=') {
            ++pos;
            if (auto hazard = checkList(word, lastOp))
              return hazard;
          } else {
            pos = after;
          }
        }
        lastPunct = 0;
        continue;
      }
      // Bracket nesting: MLIR's parser recurses once per level (affine
      // expressions, attributes, types, regions) and overflows its stack
      // some thousands of levels down.
      if (c == '(' || c == '[' || c == '{' || c == '<') {
        bool comparison =
            c == '<' && pos + 1 < text.size() && text[pos + 1] == '=';
        if (!comparison && ++depth > kMaxNesting) {
          ParserHazard h;
          h.loc = llvm::SMLoc::getFromPointer(text.data() + pos);
          h.message = "brackets nested deeper than " +
                      std::to_string(kMaxNesting) +
                      " levels; MLIR 22's parser recurses once per level and "
                      "would overflow its stack (see docs/known-issues.md)";
          return h;
        }
      } else if (c == ')' || c == ']' || c == '}' ||
                 (c == '>' && pos > 0 && text[pos - 1] != '-' &&
                  !(pos + 1 < text.size() && text[pos + 1] == '='))) {
        depth = depth > 0 ? depth - 1 : 0;
      }
      lastPunct = c;
      ++pos;
    }
  }

private:
  void skipTrivia() {
    while (pos < text.size()) {
      char c = text[pos];
      if (is(c, kSpaceClass)) {
        ++pos;
      } else if (c == '/' && pos + 1 < text.size() && text[pos + 1] == '/') {
        size_t newline = text.find('\n', pos);
        pos = newline == StringRef::npos ? text.size() : newline;
      } else {
        return;
      }
    }
  }

  void skipString() {
    ++pos;
    while (pos < text.size() && text[pos] != '"' && text[pos] != '\n') {
      if (text[pos] == '\\' && pos + 1 < text.size())
        ++pos;
      ++pos;
    }
    if (pos < text.size() && text[pos] == '"')
      ++pos;
  }

  ParserHazard hazard(StringRef keyword, StringRef op, const char *what) {
    ParserHazard h;
    h.loc = llvm::SMLoc::getFromPointer(text.data() + pos);
    h.message = ("malformed '" + keyword + "' list of '" + op + "': " + what +
                 "; expected '[' then 64-bit integers separated by ',' then "
                 "']' (MLIR 22's parser crashes on such a list instead of "
                 "reporting it; see docs/known-issues.md)")
                    .str();
    return h;
  }

  /// One element at `pos`: true, false or a 64-bit integer.
  std::optional<const char *> element() {
    if (pos < text.size() && isIdStart(text[pos])) {
      size_t start = pos;
      while (pos < text.size() && isIdChar(text[pos]))
        ++pos;
      StringRef word = text.slice(start, pos);
      if (word == "true" || word == "false")
        return std::nullopt;
      pos = start;
      return "expected an integer";
    }
    bool negative = false;
    if (pos < text.size() && text[pos] == '-') {
      negative = true;
      ++pos;
      skipTrivia();
    }
    if (pos >= text.size() || !llvm::isDigit(text[pos]))
      return "expected an integer";
    size_t start = pos;
    unsigned radix = 10;
    if (text[pos] == '0' && pos + 1 < text.size() && text[pos + 1] == 'x') {
      if (pos + 2 >= text.size() || !llvm::isHexDigit(text[pos + 2]))
        return "expected an integer ('0x' without hexadecimal digits)";
      radix = 16;
      pos += 2;
    }
    // The magnitude, saturated past 2^64.
    uint64_t magnitude = 0;
    bool overflow = false;
    while (pos < text.size() && (radix == 16 ? llvm::isHexDigit(text[pos])
                                             : llvm::isDigit(text[pos]))) {
      char c = text[pos];
      unsigned digit =
          llvm::isDigit(c)
              ? c - '0'
              : std::tolower(static_cast<unsigned char>(c)) - 'a' + 10;
      if (magnitude > (UINT64_MAX - digit) / radix)
        overflow = true;
      else
        magnitude = magnitude * radix + digit;
      ++pos;
    }
    if (pos < text.size() && text[pos] == '.') {
      pos = start;
      return "expected an integer, not a floating-point number";
    }
    uint64_t limit = negative ? (uint64_t{1} << 63) : (uint64_t{1} << 63) - 1;
    if (overflow || magnitude > limit) {
      pos = start;
      return "integer beyond 64 signed bits";
    }
    return std::nullopt;
  }

  std::optional<ParserHazard> checkList(StringRef keyword, StringRef op) {
    skipTrivia();
    if (pos >= text.size() || text[pos] != '[')
      return hazard(keyword, op, "expected '['");
    ++pos;
    skipTrivia();
    if (pos < text.size() && text[pos] == ']') {
      ++pos;
      return std::nullopt;
    }
    while (true) {
      skipTrivia();
      if (auto what = element())
        return hazard(keyword, op, *what);
      skipTrivia();
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < text.size() && text[pos] == ']') {
        ++pos;
        return std::nullopt;
      }
      return hazard(keyword, op, "expected ',' or ']'");
    }
  }

  /// After a tensor.concat's `dim` (custom form `dim(-1)`, generic form
  /// `dim = -1 : i64`): MLIR 22's verifier indexes the operands' shapes with
  /// a negative dimension and crashes instead of reporting it.
  std::optional<ParserHazard> checkConcatDim() {
    size_t after = pos;
    skipTrivia();
    if (pos < text.size() && (text[pos] == '(' || text[pos] == '=')) {
      ++pos;
      skipTrivia();
      size_t at = pos;
      if (pos + 1 < text.size() && text[pos] == '-' &&
          llvm::isDigit(text[pos + 1])) {
        ++pos;
        while (pos < text.size() && llvm::isDigit(text[pos]))
          ++pos;
        ParserHazard h;
        h.loc = llvm::SMLoc::getFromPointer(text.data() + at);
        h.message = ("dimension " + text.slice(at, pos) +
                     " of 'tensor.concat' is negative; expected a dimension "
                     "of its operands (MLIR 22's verifier indexes their "
                     "shapes with it and crashes instead of reporting it; "
                     "see docs/known-issues.md)")
                        .str();
        return h;
      }
    }
    pos = after;
    return std::nullopt;
  }

  /// An llvm.insertvalue / llvm.extractvalue position list at `pos` (a
  /// `[`): its custom parser indexes the aggregate type with each position
  /// as a 32-bit number, and crashes on one beyond 32 bits that wraps.
  std::optional<ParserHazard> checkPositions(StringRef op) {
    size_t start = pos;
    ++pos;
    while (true) {
      skipTrivia();
      size_t at = pos;
      uint64_t value = 0;
      bool digits = false;
      while (pos < text.size() && llvm::isDigit(text[pos])) {
        digits = true;
        value = std::min<uint64_t>(value * 10 + (text[pos++] - '0'),
                                   uint64_t{1} << 40);
      }
      if (!digits) {
        // Not a plain list of positions: the parser reports it.
        pos = start;
        return std::nullopt;
      }
      if (value > INT32_MAX) {
        ParserHazard h;
        h.loc = llvm::SMLoc::getFromPointer(text.data() + at);
        h.message = ("position " + text.slice(at, pos) + " of '" + op +
                     "' is beyond 32 bits; MLIR 22's parser indexes the "
                     "aggregate with it as a 32-bit number and crashes (see "
                     "docs/known-issues.md)")
                        .str();
        return h;
      }
      skipTrivia();
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        continue;
      }
      pos = start;
      return std::nullopt;
    }
  }

  /// The element types of the `ins(...)` / `outs(...)` list after the word
  /// just read (nothing when no `(` follows), added to `operandElements`;
  /// after `outs`, fails when MLIR 22's region builder of linalg.batch_matmul
  /// and batch_reduce_matmul cannot make the body (an `index` element, or
  /// complex numbers beside real ones) and crashes reporting it.
  std::optional<ParserHazard> checkElementTypes(bool outs, StringRef op) {
    size_t after = pos;
    skipTrivia();
    if (pos >= text.size() || text[pos] != '(') {
      pos = after;
      return std::nullopt;
    }
    size_t open = pos;
    // The types: after the list's first ':' at its own level, separated by
    // ',' at that level.
    int level = 0;
    size_t typesStart = StringRef::npos, end = StringRef::npos;
    for (size_t i = open; i < text.size(); ++i) {
      char c = text[i];
      level += bracketStep(text, i);
      if (level == 0) {
        end = i;
        break;
      }
      if (level == 1 && c == ':' && typesStart == StringRef::npos)
        typesStart = i + 1;
    }
    pos = after;
    if (typesStart == StringRef::npos || end == StringRef::npos)
      return std::nullopt;
    SmallVector<StringRef> types;
    splitTopLevel(text.slice(typesStart, end), ',', types);
    for (StringRef type : types)
      operandElements.push_back(elementOf(type.trim()));
    if (!outs)
      return std::nullopt;
    bool anyComplex = false, allComplex = true;
    for (StringRef element : operandElements) {
      bool complex = element.starts_with("complex<");
      anyComplex |= complex;
      allComplex &= complex;
      if (element == "index" || (anyComplex && !allComplex)) {
        ParserHazard h;
        h.loc = llvm::SMLoc::getFromPointer(text.data() + open);
        h.message = "'" + op.str() +
                    "' on element types that its body cannot combine (" +
                    (element == "index" ? "index" : "complex beside real") +
                    "); MLIR 22's parser crashes reporting it (see "
                    "docs/known-issues.md)";
        return h;
      }
    }
    return std::nullopt;
  }

  /// +1 where `s[i]` opens a bracket, -1 where it closes one (a `>` not of
  /// `->`), 0 elsewhere.
  static int bracketStep(StringRef s, size_t i) {
    char c = s[i];
    if (c == '(' || c == '[' || c == '{' || c == '<')
      return 1;
    if (c == ')' || c == ']' || c == '}' ||
        (c == '>' && i > 0 && s[i - 1] != '-'))
      return -1;
    return 0;
  }

  /// Splits `s` at `sep` outside brackets.
  static void splitTopLevel(StringRef s, char sep,
                            SmallVectorImpl<StringRef> &parts) {
    int level = 0;
    size_t start = 0;
    for (size_t i = 0; i < s.size(); ++i) {
      int step = bracketStep(s, i);
      level += step;
      if (step == 0 && s[i] == sep && level == 0) {
        parts.push_back(s.slice(start, i));
        start = i + 1;
      }
    }
    parts.push_back(s.drop_front(start));
  }

  /// The element type of a shaped type (`tensor<4x4xf32>`,
  /// `memref<4xf32, strided<[1]>>`), or the type itself.
  static StringRef elementOf(StringRef type) {
    size_t open = type.find('<');
    if (open == StringRef::npos || type.back() != '>' ||
        !(type.starts_with("tensor") || type.starts_with("memref") ||
          type.starts_with("vector")))
      return type;
    StringRef inner = type.slice(open + 1, type.size() - 1);
    SmallVector<StringRef> parts;
    splitTopLevel(inner, ',', parts);
    // Past each dimension: digits or '?', then 'x'.
    StringRef rest = parts.front().trim();
    while (true) {
      size_t n = 0;
      while (n < rest.size() && (llvm::isDigit(rest[n]) || rest[n] == '?'))
        ++n;
      if (n == 0 || n >= rest.size() || rest[n] != 'x')
        return rest;
      rest = rest.drop_front(n + 1).ltrim();
    }
  }

  static constexpr int64_t kMaxNesting = 512;

  StringRef text;
  size_t pos = 0;
  int64_t depth = 0;
  /// The element types of the current op's `ins` and `outs` lists so far.
  SmallVector<StringRef> operandElements;
};

} // namespace

std::optional<ParserHazard> mlir::tp::findParserHazard(StringRef text) {
  return Scanner(text).run();
}

bool mlir::tp::checkParserHazards(llvm::SourceMgr &sourceMgr) {
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  std::optional<ParserHazard> hazard = findParserHazard(buffer->getBuffer());
  if (!hazard)
    return true;
  sourceMgr.PrintMessage(llvm::errs(), hazard->loc, llvm::SourceMgr::DK_Error,
                         hazard->message);
  return false;
}
