//===- tp-compile.cpp - MLIR to a program library ------------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// tp-compile model.mlir [--target cpu|cuda [--gpu-arch sm_90]] -o model.so
//
// 1. Parses the module; in global form (meshes, no function in local form)
//    runs --tp-spmd first.
// 2. Lowers with --tp-lower-to-cpu (manifest, bufferization, runtime calls,
//    LLVM dialect, entry points), or with --tp-lower-to-cuda for --target
//    cuda (the same, with GPU kernels compiled by the CUDA toolkit's ptxas
//    into a fatbin that the library holds, launched through the runtime).
// 3. Translates to LLVM IR, optimizes at -O3 and emits an object file for
//    the host CPU, in-process.
// 4. Links it into a shared library with the system C compiler and appends
//    the checksum trailer that tprt_program_load checks
//    (runtime/src/ProgramFile.h). The library exports `tprt_manifest` and
//    one `tprt_entry_<function>` per function; it calls the runtime through
//    the rank context's table.
//
// An input ending in `.ll` is LLVM IR of a program (--emit=llvm, perhaps
// edited by hand): it goes through steps 3 and 4 only.
//
// --sequence-parallel, --replicate-open-boundaries, --auto-plan (with
// --memory-per-device and --cost-model), --search (on by default, not with
// --sequence-parallel) and the rest of --tp-spmd's options (--tp-propagate's,
// declared in Passes.td) are taken as flags and handed to its parser;
// --unsharded strips every sharding first (the one-device reference);
// --reference lowers without the project's fusion, math approximations and BLAS
// calls (tp-run
// --verify's independent reference);
// --tp-report prints the plan (the tp-report pass on the sharded program) and,
// once lowered, each entry point's arena beside the report's peak;
// --emit=mlir|llvm|obj|so stops after the named stage. Exit codes: 0 on
// success, 1 when the input does not compile (with its diagnostics), 2 for
// a bad command line or a failing tool.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Passes.h"
#include "tp/Conversion/Targets.h"
#include "tp/Dialect/TP/IR/TPOps.h"
#include "tp/Dialect/TP/Transforms/Passes.h"
#include "tp/InitAll.h"
#include "tp/ParserGuard.h"

#include "ProgramFile.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/Analysis/LazyCallGraph.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/Transforms/Utils/SplitModule.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {

enum class Emit { MLIR, LLVM, Object, Library };

cl::OptionCategory category("tp-compile options");

cl::opt<std::string> inputFile(cl::Positional,
                               cl::desc("<model.mlir | program.ll>"),
                               cl::Required, cl::cat(category));
cl::opt<std::string> outputFile("o", cl::desc("Output file"),
                                cl::value_desc("model.so"), cl::Required,
                                cl::cat(category));
/// --target's help: the registry's targets (tprt_targets.def).
const std::string &targetHelp() {
  static const std::string help = [] {
    std::string text = "Where the program runs:";
    for (const tp::TargetInfo &t : tp::getTargets())
      text += (" " + t.name + " (" + t.description + ");").str();
    text.back() = '.';
    return text;
  }();
  return help;
}
cl::opt<std::string> target("target", cl::desc(targetHelp()),
                            cl::value_desc("cpu|cuda"), cl::cat(category),
                            cl::init("cpu"));
cl::opt<std::string> gpuArch(
    "gpu-arch",
    cl::desc("With --target cuda: the architecture the kernels are compiled "
             "for (the fatbin holds its cubin and PTX)"),
    cl::init("sm_90"), cl::cat(category));
cl::opt<std::string> cudaToolkit(
    "cuda-toolkit",
    cl::desc("With --target cuda: the CUDA toolkit whose ptxas and fatbinary "
             "compile the kernels (default: the one found at build time)"),
    cl::init(""), cl::cat(category));
cl::opt<Emit> emit(
    "emit", cl::desc("Stop after a stage"),
    cl::values(clEnumValN(Emit::MLIR, "mlir", "lowered MLIR (LLVM dialect)"),
               clEnumValN(Emit::LLVM, "llvm", "optimized LLVM IR"),
               clEnumValN(Emit::Object, "obj", "object file"),
               clEnumValN(Emit::Library, "so", "shared library")),
    cl::init(Emit::Library), cl::cat(category));
/// The global-form options are --tp-spmd's, that is --tp-propagate's
/// (declared once, in Passes.td), given as flags: `--auto-plan`,
/// `--memory-per-device=80GB` (or `--memory-per-device 80GB`). main takes
/// them out of the command line before cl parses the rest; their text, as
/// --tp-spmd="..." takes it, is here.
std::string spmdText;
/// Their values at --tp-spmd's defaults, and the names given.
tp::PropagatePassOptions spmdOptions;
llvm::StringSet<> spmdGiven;

/// --tp-spmd's options as the pass prints them, `name=default` each (search
/// at the pipeline's default).
const SmallVector<std::pair<std::string, std::string>> &spmdDefaults() {
  static const SmallVector<std::pair<std::string, std::string>> defaults = [] {
    tp::PropagatePassOptions options;
    std::string error;
    (void)tp::parseSPMDOptions("", options, error);
    std::string printed;
    llvm::raw_string_ostream os(printed);
    tp::createPropagatePass(options)->printAsTextualPipeline(os);
    StringRef list = StringRef(printed).split('{').second.rsplit('}').first;
    SmallVector<StringRef> items;
    list.split(items, ' ', -1, /*KeepEmpty=*/false);
    SmallVector<std::pair<std::string, std::string>> out;
    for (StringRef item : items) {
      auto [name, value] = item.split('=');
      out.push_back({name.str(), value.str()});
    }
    return out;
  }();
  return defaults;
}

/// True when `name` is one of --tp-spmd's options; `takesValue` says whether
/// it is more than a flag (its default is not a boolean).
bool isSPMDOption(StringRef name, bool &takesValue) {
  for (const auto &[option, value] : spmdDefaults())
    if (option == name) {
      takesValue = value != "true" && value != "false";
      return true;
    }
  return false;
}

/// Moves --tp-spmd's options from `args` into spmdText.
void takeSPMDFlags(SmallVectorImpl<const char *> &args) {
  const auto &registered = cl::getRegisteredOptions();
  SmallVector<const char *> rest;
  for (size_t i = 0; i < args.size(); ++i) {
    StringRef arg = args[i];
    if (i == 0 || !arg.starts_with("-") || arg == "--") {
      rest.push_back(args[i]);
      continue;
    }
    StringRef flag = arg.ltrim('-');
    auto [name, value] = flag.split('=');
    bool takesValue = false;
    if (registered.count(name) || !isSPMDOption(name, takesValue)) {
      rest.push_back(args[i]);
      continue;
    }
    std::string item = flag.str();
    if (takesValue && !flag.contains('=') && i + 1 < args.size())
      item = (name + "=" + args[++i]).str();
    spmdText += (spmdText.empty() ? "" : " ") + item;
  }
  args.assign(rest.begin(), rest.end());
}

/// The help for them: each with --tp-spmd's default.
const std::string &spmdHelp() {
  static const std::string help = [] {
    std::string text =
        "\nGlobal-form options: --tp-spmd's, which are --tp-propagate's "
        "(tp-opt --help describes each; search is on unless "
        "sequence-parallel is), shown at their defaults:\n";
    for (const auto &[name, value] : spmdDefaults())
      text += "  --" + name + "=" + value + "\n";
    return text;
  }();
  return help;
}

cl::opt<bool> unsharded(
    "unsharded",
    cl::desc("Compile the model without its shardings, for one device (the "
             "reference that tp-run --verify compares against); needs global "
             "form"),
    cl::init(false), cl::cat(category));
cl::opt<bool> reference(
    "reference",
    cl::desc("The plain lowering (--tp-lower-to-cpu's reference option): no "
             "elementwise fusion, exact libm math instead of polynomial "
             "approximations, GEMMs as loops instead of BLAS calls; with "
             "--unsharded, the independent reference of tp-run --verify"),
    cl::init(false), cl::cat(category));
cl::opt<bool> emulateGpuMapping(
    "emulate-gpu-mapping",
    cl::desc("Test aid: map every linalg op to GPU kernels as the CUDA "
             "lowering does and run them as loops on the CPU "
             "(--tp-lower-to-cpu's emulate-gpu-mapping), so tp-run --verify "
             "checks the kernels' indexing and reductions"),
    cl::init(false), cl::cat(category));
cl::opt<bool> outlineLayers(
    "outline-layers",
    cl::desc("Compile each repeated layer once: structurally identical runs "
             "of ops (a model's layers) become one function called per layer "
             "(--tp-outline-repeated-layers; default on, not with "
             "--reference); --outline-layers=false compiles one flat "
             "function"),
    cl::init(true), cl::cat(category));
cl::opt<unsigned> maxFunctionOps(
    "max-function-ops",
    cl::desc("Functions longer than this many ops (what repeats did "
             "not take) are cut into parts called once, "
             "so that LLVM's time stays linear in the model's size; 0: never"),
    cl::init(tp::kDefaultMaxFunctionOps), cl::cat(category));
cl::opt<std::string> matmulPrecision(
    "matmul-precision",
    cl::desc("How f32 GEMMs may compute, as PyTorch's "
             "set_float32_matmul_precision: highest (IEEE f32, the default), "
             "high (TF32 inputs, f32 accumulation: PyTorch's allow_tf32, "
             "JAX's default on GPUs), medium (bf16 inputs, f32 "
             "accumulation). CUDA programs follow it in cuBLAS; CPU ranks "
             "compute IEEE f32 at every setting; tp-run --verify's tolerance "
             "follows it"),
    cl::init("highest"), cl::cat(category));
cl::opt<unsigned> jobs(
    "j",
    cl::desc("Threads that optimize and code-generate the library's functions "
             "in parallel, a share of the functions each (default 0: one per "
             "CPU); the result does not depend on it"),
    cl::init(0), cl::cat(category));
cl::opt<bool> report(
    "tp-report",
    cl::desc("Print the plan of the sharded program to stderr (tp-report: "
             "shardings, collectives, memory per device), and after lowering "
             "each entry point's arena (tp-plan-arena) beside the report's "
             "peak; on --target cuda also each GPU kernel and GEMM call with "
             "its roofline time (tp-report-kernels), and each kernel's "
             "registers and spills from ptxas -v (tp-report-registers)"),
    cl::init(false), cl::cat(category));
cl::opt<bool> verifyEach(
    "verify-each",
    cl::desc("Verify the IR after every pass, as tp-opt does (to find the "
             "pass that broke it); by default the model is verified when "
             "parsed, once sharded and once lowered"),
    cl::init(false), cl::cat(category));
cl::opt<std::string> linker("cc", cl::desc("C compiler used to link"),
                            cl::init("cc"), cl::cat(category));

/// True when the module declares meshes but no function is in local form.
bool isGlobalForm(ModuleOp module) {
  bool hasMesh = !module.getOps<tp::MeshOp>().empty();
  bool hasLocal = false;
  module.walk([&](Operation *op) {
    if (op->hasAttr(tp::TPDialect::kSpmdAttrName))
      hasLocal = true;
  });
  return hasMesh && !hasLocal;
}

int fail(const llvm::Twine &message) {
  llvm::errs() << "tp-compile: " << message << "\n";
  return 2;
}

} // namespace

/// Appends the checksum trailer the runtime checks before it loads the
/// library (runtime/src/ProgramFile.h).
static int appendChecksum(StringRef library) {
  auto linked = llvm::MemoryBuffer::getFile(library, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!linked)
    return fail("cannot read the linked library '" + library.str() +
                "': " + linked.getError().message());
  StringRef bytes = (*linked)->getBuffer();
  unsigned char trailer[tprt::kTrailerSize];
  tprt::makeTrailer(bytes.size(),
                    tprt::fnv1a(tprt::kFnvOffset, bytes.data(), bytes.size()),
                    trailer);
  std::error_code ec;
  llvm::raw_fd_ostream out(library, ec, llvm::sys::fs::OF_Append);
  if (ec)
    return fail("cannot write '" + library.str() + "': " + ec.message());
  out.write(reinterpret_cast<const char *>(trailer), sizeof(trailer));
  out.close();
  if (out.has_error())
    return fail("cannot write '" + library.str() +
                "': " + out.error().message());
  return 0;
}

/// What the command line asks of the target's lowering.
tp::TargetLowering targetLowering() {
  tp::TargetLowering lowering;
  lowering.outlineLayers = outlineLayers;
  lowering.maxFunctionOps = maxFunctionOps;
  lowering.matmulPrecision = matmulPrecision;
  lowering.report = report;
  if (spmdGiven.contains("cost-model"))
    lowering.costModel = spmdOptions.costModel;
  lowering.reference = reference;
  lowering.emulateGpuMapping = emulateGpuMapping;
  if (gpuArch.getNumOccurrences())
    lowering.gpuArch = gpuArch;
  if (cudaToolkit.getNumOccurrences())
    lowering.toolkit = cudaToolkit;
  return lowering;
}

/// --tp-report, once lowered: each entry point's arena, from the `func` and
/// `arena` lines (tp-plan-arena) of the manifest the library will hold (the
/// `tprt_manifest` global), on stderr after the report.
static void printArenas(ModuleOp module) {
  auto global = module.lookupSymbol<LLVM::GlobalOp>("tprt_manifest");
  auto manifest =
      global ? dyn_cast_or_null<StringAttr>(global.getValueOrNull()) : nullptr;
  if (!manifest)
    return;
  SmallVector<StringRef> lines;
  manifest.getValue().split(lines, '\n');
  StringRef function;
  bool planned = false;
  for (StringRef line : lines) {
    if (line.consume_front("func ")) {
      function = line.split(' ').first.trim('"');
      planned = false;
    } else if (line.consume_front("arena ")) {
      planned = true;
      llvm::errs() << "tp-report @" << function << ": arena " << line
                   << " B per device (tp-plan-arena: the intermediates laid "
                      "out by liveness, allocated once per session; the "
                      "peak live tensors above count arguments and results "
                      "too)\n";
    } else if (line == "end" && !function.empty() && !planned) {
      llvm::errs() << "tp-report @" << function
                   << ": no arena (no intermediate tp-plan-arena can hold)\n";
    }
  }
}

/// Steps 1 and 2: the model to unoptimized LLVM IR in `llvmModule` (left
/// null when --emit=mlir wrote the lowered MLIR). Returns the exit code.
static int lowerModel(llvm::LLVMContext &llvmContext,
                      std::unique_ptr<llvm::Module> &llvmModule,
                      TimingScope &timing) {
  // Dialects load as the model and the passes need them (all of them
  // upfront cost a 1-layer compile 12 ms of its 0.2 s).
  DialectRegistry registry;
  tp::registerAllDialects(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  MLIRContext context(registry);
  // Diagnostics name the location and the problem; the op dump that MLIR
  // attaches by default would bury them (whole functions).
  context.printOpOnDiagnostic(false);

  TimingScope parsing = timing.nest("Parse");
  std::string error;
  auto input = openInputFile(inputFile, &error);
  if (!input)
    return fail(error);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  if (!tp::checkParserHazards(sourceMgr))
    return 1;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;
  parsing.stop();

  // Two stages, each verified once as a whole (every pass with
  // --verify-each): a pass that breaks the IR is still caught before the
  // next stage or LLVM sees it, without a verification of the whole module
  // after each of the pipelines' fifty passes (a GPT-2 block on 4 devices:
  // 0.17 s -> 0.15 s).
  auto runStage = [&](PassManager &pm, StringRef name) -> LogicalResult {
    if (failed(pm.run(*module)))
      return failure();
    if (verifyEach)
      return success();
    TimingScope verifying = timing.nest(("Verify " + name).str());
    if (succeeded(verify(*module)))
      return success();
    llvm::errs() << "tp-compile: internal error: the " << name
                 << " IR does not verify (tp-compile --verify-each names the "
                    "pass)\n";
    return failure();
  };
  PassManager pm(&context);
  pm.enableTiming(timing);
  pm.enableVerifier(verifyEach);
  if (unsharded)
    pm.addPass(tp::createStripShardingsPass());
  else if (isGlobalForm(*module)) {
    tp::buildSPMDPipeline(pm, spmdOptions);
  } else if (!spmdGiven.empty()) {
    return fail("'" + inputFile +
                "' is in local form already; --sequence-parallel, "
                "--replicate-open-boundaries, --auto-plan and --search apply "
                "to global form");
  }
  if (report)
    pm.addPass(tp::createReportPass());
  if (!pm.empty() && failed(runStage(pm, "sharded")))
    return 1;
  PassManager lower(&context);
  lower.enableTiming(timing);
  lower.enableVerifier(verifyEach);
  std::string lowerError;
  if (failed(tp::buildTargetPipeline(lower, *tp::lookupTarget(target),
                                     targetLowering(), lowerError)))
    return fail(lowerError);
  if (failed(runStage(lower, "lowered")))
    return 1;
  if (report)
    printArenas(*module);
  if (emit == Emit::MLIR) {
    auto out = openOutputFile(outputFile, &error);
    if (!out)
      return fail(error);
    module->print(out->os());
    out->keep();
    return 0;
  }

  TimingScope translating = timing.nest("Translate to LLVM IR");
  llvmModule = translateModuleToLLVMIR(*module, llvmContext, "tp-program");
  return llvmModule ? 0 : 1;
}

/// A function of one block: no loops (a driver calling layers, an entry
/// point unpacking its arguments).
static bool isStraightLine(const llvm::Function &function) {
  return !function.isDeclaration() && function.size() == 1;
}

/// Optimizes `module` for `machine` with LLVM's -O3 pipeline, loops not
/// unrolled: a program's GEMMs are library calls and its other loops stream
/// through memory, where the vectorizer's interleaving is what unrolling
/// would give. Unrolling made a GPT-2 layer's IR ten times larger and cost
/// two thirds of tp-compile's time (0.62 -> 0.20 s), for no measurable
/// speed of the program.
/// Without CalledValuePropagation: it only annotates indirect calls with the
/// functions they may reach, and a program's only indirect calls are into
/// the runtime's table, which it cannot resolve. Its solver is superlinear
/// in the pointers a module passes around: on a 1,024-layer driver (6,145
/// arguments, one call per layer) it took 2.8 of LLVM's 3.4 s.
static void optimizeModule(llvm::Module &module, llvm::TargetMachine *machine) {
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager sccs;
  llvm::ModuleAnalysisManager modules;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopUnrolling = false;
  llvm::PassInstrumentationCallbacks instrumentation;
  instrumentation.registerShouldRunOptionalPassCallback(
      [](StringRef pass, llvm::Any ir) {
        if (pass == "CalledValuePropagationPass")
          return false;
        // Nor the argument attributes of straight-line code (a driver, an
        // entry point): they would help optimize loops it has none of, and
        // inferring them is superlinear in its arguments (16,000 weights
        // of a 1,024-layer GPT: 2.0 s).
        if (pass == "PostOrderFunctionAttrsPass")
          if (const auto *scc =
                  llvm::any_cast<const llvm::LazyCallGraph::SCC *>(&ir))
            return llvm::none_of(**scc, [](const llvm::LazyCallGraph::Node &n) {
              return isStraightLine(n.getFunction());
            });
        return true;
      });
  llvm::PassBuilder builder(machine, tuning, std::nullopt, &instrumentation);
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(sccs);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, sccs, modules);
  llvm::ModulePassManager pipeline =
      builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  pipeline.run(module, modules);
}

/// Marks `module`'s straight-line functions (one block: the drivers that call
/// a model's layers and parts, the entry wrappers) to be code-generated as at
/// -O0: they run once per call and hold no loops, and the code generator's
/// schedulers are quadratic in a block's length, which at depth is thousands
/// of weights passed on the stack (96 GPT layers: 0.8 of 1.3 s).
/// Their calls lose LLVM's `tail` marks: a tail call is what fast
/// instruction selection leaves to the DAG selector, with the rest of the
/// block above it.
static void codegenStraightLineQuickly(llvm::Module &module) {
  for (llvm::Function &function : module) {
    if (!isStraightLine(function))
      continue;
    function.addFnAttr(llvm::Attribute::OptimizeNone);
    function.addFnAttr(llvm::Attribute::NoInline);
    for (llvm::Instruction &inst : function.getEntryBlock())
      if (auto *call = llvm::dyn_cast<llvm::CallInst>(&inst))
        call->setTailCallKind(llvm::CallInst::TCK_None);
  }
}

/// Defines compiler-rt's `__truncsfbf2` (f32 to bf16, rounded to nearest
/// even; a NaN stays a quiet NaN) in `module`, weak and hidden: LLVM's x86
/// code generator calls it where it carries a bf16 value through a
/// register as f32 (a phi of bf16, without AVX512-BF16), and the system
/// compiler's runtime library the program is linked with may lack it (GCC
/// 12's libgcc, Debian 12's, does). Each part's object has its own copy;
/// the linker keeps one.
static void defineBF16Truncation(llvm::Module &module) {
  if (module.getFunction("__truncsfbf2"))
    return;
  llvm::LLVMContext &context = module.getContext();
  llvm::Type *f32 = llvm::Type::getFloatTy(context);
  llvm::Type *i32 = llvm::Type::getInt32Ty(context);
  auto *function = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getBFloatTy(context), {f32}, false),
      llvm::GlobalValue::WeakAnyLinkage, "__truncsfbf2", module);
  function->setVisibility(llvm::GlobalValue::HiddenVisibility);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", function));
  llvm::Value *x = function->getArg(0);
  llvm::Value *bits = b.CreateBitCast(x, i32);
  llvm::Value *high = b.CreateLShr(bits, 16);
  // bits + 0x7fff + (the kept half's lowest bit), then the high half.
  llvm::Value *bias = b.CreateAdd(b.CreateAnd(high, 1), b.getInt32(0x7fff));
  llvm::Value *rounded = b.CreateLShr(b.CreateAdd(bits, bias), 16);
  llvm::Value *quiet = b.CreateOr(high, b.getInt32(0x40));
  llvm::Value *half = b.CreateSelect(b.CreateFCmpUNO(x, x), quiet, rounded);
  b.CreateRet(b.CreateBitCast(b.CreateTrunc(half, b.getInt16Ty()),
                              llvm::Type::getBFloatTy(context)));
}

/// Links `objects` into the library (-o) with the system C compiler and
/// appends the checksum.
static int link(ArrayRef<std::string> objects) {
  llvm::ErrorOr<std::string> cc = llvm::sys::findProgramByName(linker);
  if (!cc)
    return fail("cannot find the C compiler '" + linker +
                "' to link the library");
  SmallVector<StringRef> args = {*cc, "-shared", "-o", outputFile};
  for (const std::string &object : objects)
    args.push_back(object);
  args.push_back("-lm");
  std::string linkError;
  int rc =
      llvm::sys::ExecuteAndWait(*cc, args, std::nullopt, {}, 0, 0, &linkError);
  if (rc != 0)
    return fail("linking with " + *cc + " failed" +
                (linkError.empty() ? "" : ": " + linkError));
  return appendChecksum(outputFile);
}

/// Optimizes (-O3 for `machine`) the module in `bitcode`, in an LLVM context
/// of its own (one per thread), and writes its object file to `objectPath`;
/// returns an error message, or nothing.
static std::string optimizeAndEmit(StringRef bitcode,
                                   std::unique_ptr<llvm::TargetMachine> machine,
                                   const std::string &objectPath) {
  llvm::LLVMContext context;
  llvm::Expected<std::unique_ptr<llvm::Module>> module =
      llvm::parseBitcodeFile(llvm::MemoryBufferRef(bitcode, "part"), context);
  if (!module)
    return "reading a part of the program back: " +
           llvm::toString(module.takeError());
  optimizeModule(**module, machine.get());
  defineBF16Truncation(**module);
  std::error_code ec;
  llvm::raw_fd_ostream out(objectPath, ec, llvm::sys::fs::OF_None);
  if (ec)
    return "cannot write " + objectPath + ": " + ec.message();
  codegenStraightLineQuickly(**module);
  llvm::legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, out, nullptr,
                                   llvm::CodeGenFileType::ObjectFile))
    return "the target cannot emit object files";
  codegen.run(**module);
  return {};
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  tp::setCrashMessage();
  // --help lists these options only, not every LLVM backend flag; a bad
  // command line is exit code 2, like every other usage error.
  cl::HideUnrelatedOptions(category);
  // --mlir-timing: each stage's time (parse, every pass, translation, LLVM,
  // link), printed at the end.
  registerDefaultTimingManagerCLOptions();
  static cl::extrahelp spmdExtraHelp(spmdHelp());
  SmallVector<const char *> args(argv, argv + argc);
  takeSPMDFlags(args);
  if (!cl::ParseCommandLineOptions(
          static_cast<int>(args.size()), args.data(),
          "tp-compile: compiles a tp-mlir model (global or local form) into a "
          "program library for the tprt runtime\n\n"
          "Exit codes: 0 compiled, 1 the model does not compile (diagnostics "
          "printed), 2 a bad command line or a failing tool.\n",
          &llvm::errs()))
    return 2;
  {
    // The global-form options, checked by --tp-propagate itself when it runs
    // (which combine, the budget, the machine model).
    std::string error;
    if (failed(tp::parseSPMDOptions(spmdText, spmdOptions, error, &spmdGiven)))
      return fail(error.empty() ? "bad --tp-spmd option in '" + spmdText + "'"
                                : error);
    // Runner-ups only explain the plan (--tp-report); a compile needs none.
    if (!spmdGiven.contains("explain"))
      spmdOptions.explain = report;
  }
  if (unsharded && !spmdGiven.empty())
    return fail("--unsharded compiles without shardings; it takes no "
                "--tp-spmd option");
  if (matmulPrecision != "highest" && matmulPrecision != "high" &&
      matmulPrecision != "medium")
    return fail("--matmul-precision '" + matmulPrecision +
                "' is not one of highest, high, medium");
  // The target, and the options its lowering takes: checked before any
  // work, by building its pipeline once.
  const tp::TargetInfo *targetInfo = tp::lookupTarget(target);
  if (!targetInfo)
    return fail("--target '" + target + "' is not one of " +
                tp::getTargetNames());
  {
    OpPassManager check(ModuleOp::getOperationName());
    std::string error;
    if (failed(tp::buildTargetPipeline(check, *targetInfo, targetLowering(),
                                       error)))
      return fail(error);
  }

  DefaultTimingManager timing;
  applyDefaultTimingManagerCLOptions(timing);
  TimingScope timingRoot = timing.getRootScope();

  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule;
  std::string error;
  if (StringRef(inputFile).ends_with(".ll")) {
    // LLVM IR of a program (--emit=llvm, perhaps edited): steps 3 and 4.
    if (unsharded || reference || !spmdGiven.empty() || emit == Emit::MLIR)
      return fail("'" + inputFile +
                  "' is LLVM IR: it is compiled and linked as it is; "
                  "--unsharded, --reference, --emit=mlir and the --tp-spmd "
                  "options apply to MLIR input");
    llvm::SMDiagnostic diagnostic;
    llvmModule = llvm::parseIRFile(inputFile, diagnostic, llvmContext);
    if (!llvmModule) {
      diagnostic.print("tp-compile", llvm::errs());
      return 1;
    }
  } else if (int rc = lowerModel(llvmContext, llvmModule, timingRoot)) {
    return rc;
  } else if (!llvmModule) {
    return 0;
  }

  // LLVM IR for the host, optimized.
  std::string triple = llvm::sys::getProcessTriple();
  const llvm::Target *llvmTarget =
      llvm::TargetRegistry::lookupTarget(llvm::Triple(triple), error);
  if (!llvmTarget)
    return fail("no LLVM target for " + triple + ": " + error);
  llvm::StringMap<bool> hostFeatures = llvm::sys::getHostCPUFeatures();
  std::string features;
  for (auto &feature : hostFeatures)
    features += (feature.second ? "+" : "-") + feature.first().str() + ",";
  llvm::TargetOptions options;
  std::string cpu = llvm::sys::getHostCPUName().str();
  auto makeMachine = [&] {
    return std::unique_ptr<llvm::TargetMachine>(llvmTarget->createTargetMachine(
        llvm::Triple(triple), cpu, features, options, llvm::Reloc::PIC_,
        std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  };
  std::unique_ptr<llvm::TargetMachine> machine = makeMachine();
  llvmModule->setDataLayout(machine->createDataLayout());
  llvmModule->setTargetTriple(llvm::Triple(triple));

  // A library: its functions (layers, parts) optimized and code-generated on
  // several threads, each a share of them in a context of its own.
  unsigned threads = jobs ? unsigned(jobs)
                          : llvm::hardware_concurrency().compute_thread_count();
  unsigned defined = llvm::count_if(
      *llvmModule, [](llvm::Function &f) { return !f.isDeclaration(); });
  threads = std::min(threads, defined);
  if (emit == Emit::Library && threads > 1) {
    TimingScope llvmTiming =
        timingRoot.nest("LLVM: optimize and generate code (threads)");
    SmallVector<SmallString<0>> parts;
    llvm::SplitModule(
        *llvmModule, threads,
        [&](std::unique_ptr<llvm::Module> part) {
          SmallString<0> &bitcode = parts.emplace_back();
          llvm::raw_svector_ostream os(bitcode);
          llvm::WriteBitcodeToFile(*part, os);
        },
        /*PreserveLocals=*/false, /*RoundRobin=*/true);
    std::vector<std::string> objects(parts.size()), errors(parts.size());
    {
      llvm::DefaultThreadPool pool(llvm::hardware_concurrency(threads));
      for (size_t i = 0; i < parts.size(); ++i)
        pool.async([&, i] {
          objects[i] = outputFile + "." + std::to_string(i) + ".o";
          errors[i] = optimizeAndEmit(parts[i], makeMachine(), objects[i]);
        });
      pool.wait();
    }
    llvmTiming.stop();
    std::string failure;
    for (const std::string &e : errors)
      if (!e.empty() && failure.empty())
        failure = e;
    TimingScope linking = timingRoot.nest("Link");
    int rc = failure.empty() ? link(objects) : fail(failure);
    for (const std::string &object : objects)
      llvm::sys::fs::remove(object);
    return rc;
  }

  TimingScope optimizing = timingRoot.nest("LLVM: optimize");
  optimizeModule(*llvmModule, machine.get());
  optimizing.stop();
  if (emit == Emit::LLVM) {
    auto out = openOutputFile(outputFile, &error);
    if (!out)
      return fail(error);
    llvmModule->print(out->os(), nullptr);
    out->keep();
    return 0;
  }

  // Object file (next to the library unless it is what was asked for).
  std::string objectPath =
      emit == Emit::Object ? outputFile.getValue() : outputFile + ".o";
  {
    TimingScope generating = timingRoot.nest("LLVM: generate code");
    auto out = openOutputFile(objectPath, &error);
    if (!out)
      return fail(error);
    codegenStraightLineQuickly(*llvmModule);
    llvm::legacy::PassManager codegen;
    if (machine->addPassesToEmitFile(codegen, out->os(), nullptr,
                                     llvm::CodeGenFileType::ObjectFile))
      return fail("the target cannot emit object files");
    codegen.run(*llvmModule);
    out->keep();
  }
  if (emit == Emit::Object)
    return 0;

  TimingScope linking = timingRoot.nest("Link");
  int rc = link({objectPath});
  llvm::sys::fs::remove(objectPath);
  return rc;
}
