//===- TPOps.cpp - tp dialect operations ----------------------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Verification is split in two: `verify()` checks what an op knows alone
// (ranks, dimension indices, axis lists); `verifySymbolUses()` checks what
// needs the mesh (axis names, group sizes, divisibility), once the symbol
// table is available.
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/IR/TPOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::tp;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

bool mlir::tp::isInLocalForm(Operation *op) {
  auto func = op->getParentOfType<FunctionOpInterface>();
  return func && func->hasAttr(TPDialect::kSpmdAttrName);
}

/// The tp.mesh named `name` in the symbol table nearest `from` (the scope
/// SymbolTable::lookupNearestSymbolFrom searches), or null. Every sharding on
/// every op is checked against its mesh, and a module holds a handful of
/// symbols: a scan comparing uniqued names, where upstream's lookup makes the
/// `sym_name` identifier again on every call.
static MeshOp findMeshNear(Operation *from, StringAttr name) {
  Operation *table = from;
  // A builtin.module is the usual table: known by its name, before the
  // trait query (a virtual call per op on the way up).
  while (!isa<ModuleOp>(table) && !table->hasTrait<OpTrait::SymbolTable>()) {
    table = table->getParentOp();
    // An unregistered op with one region may be a symbol table: upstream's
    // lookup stops there, and so does this one.
    if (!table || (table->getNumRegions() == 1 && !table->getDialect()))
      return MeshOp();
  }
  Region &region = table->getRegion(0);
  if (region.empty())
    return MeshOp();
  for (Operation &op : region.front())
    if (auto mesh = dyn_cast<MeshOp>(op); mesh && mesh.getSymNameAttr() == name)
      return mesh;
  return MeshOp();
}

/// Finds the tp.mesh that `ref` names, as seen from `anchor`.
static FailureOr<MeshOp>
lookupMesh(Operation *anchor, FlatSymbolRefAttr ref,
           SymbolTableCollection *symbols,
           function_ref<InFlightDiagnostic()> emitError) {
  Operation *symbol = nullptr;
  if (symbols)
    symbol = symbols->lookupNearestSymbolFrom(anchor, ref.getAttr());
  else if (MeshOp mesh = findMeshNear(anchor, ref.getAttr()))
    symbol = mesh;
  else // None: upstream's lookup, for what the diagnostic says.
    symbol = SymbolTable::lookupNearestSymbolFrom(anchor, ref.getAttr());
  if (!symbol)
    return emitError() << "unknown mesh " << ref;
  auto mesh = dyn_cast<MeshOp>(symbol);
  if (!mesh)
    return emitError() << ref << " is a '" << symbol->getName()
                       << "', not a tp.mesh";
  // The mesh reports its own errors; a malformed one must not be used here.
  if (mesh.getAxisNames().size() != mesh.getAxisSizes().size() ||
      llvm::any_of(mesh.getAxisNames(),
                   [](Attribute a) { return !isa<StringAttr>(a); }) ||
      llvm::any_of(mesh.getAxisSizes(), [](int64_t s) { return s <= 0; }))
    return emitError() << "mesh " << ref << " is malformed";
  return mesh;
}

/// Checks that every axis in `axes` (strings: the attribute's verifier ran)
/// is an axis of `mesh`; `where` says where the list is, for a diagnostic.
/// Gives the number of devices they span together.
static FailureOr<int64_t>
checkAxesInMesh(MeshOp mesh, ArrayAttr axes, function_ref<std::string()> where,
                function_ref<InFlightDiagnostic()> emitError) {
  int64_t groupSize = 1;
  ArrayAttr names = mesh.getAxisNames();
  ArrayRef<int64_t> sizes = mesh.getAxisSizes();
  for (Attribute axis : axes) {
    const Attribute *it = llvm::find(names, axis);
    if (it == names.end())
      return emitError() << "unknown axis " << axis << where() << "; mesh @"
                         << mesh.getSymName() << " has axes " << names;
    groupSize *= sizes[it - names.begin()];
  }
  return groupSize;
}

FailureOr<MeshOp>
mlir::tp::verifyShardingFor(ShardingAttr sharding, Type type, Operation *anchor,
                            bool local,
                            function_ref<InFlightDiagnostic()> emitError,
                            SymbolTableCollection *symbols) {
  // Tensors in the compiler; memrefs once a program is bufferized, where the
  // arguments keep their shardings for the runtime.
  auto tensorType = dyn_cast<ShapedType>(type);
  // Attributes built by passes (ShardingAttr::get) skip the attribute's own
  // verifier; check its invariants here (an axis that both splits and is
  // pending would otherwise reach the partitioner as wrong code).
  if (failed(ShardingAttr::verify(emitError, sharding.getMesh(),
                                  sharding.getDims(), sharding.getPartial())))
    return failure();
  if (!isa<RankedTensorType, MemRefType>(type))
    return emitError() << "a sharding describes a ranked tensor or memref, got "
                       << type;
  FailureOr<MeshOp> mesh =
      lookupMesh(anchor, sharding.getMesh(), symbols, emitError);
  if (failed(mesh))
    return failure();
  if (sharding.getRank() != static_cast<unsigned>(tensorType.getRank()))
    return emitError() << "sharding " << sharding << " has "
                       << sharding.getRank() << " dimensions but type "
                       << tensorType << " has rank " << tensorType.getRank();
  for (unsigned dim = 0, e = sharding.getRank(); dim < e; ++dim) {
    FailureOr<int64_t> groupSize = checkAxesInMesh(
        *mesh, sharding.getDims()[dim],
        [&] { return " in dimension " + std::to_string(dim); }, emitError);
    if (failed(groupSize))
      return failure();
    int64_t size = tensorType.getDimSize(dim);
    if (local || ShapedType::isDynamic(size) || size % *groupSize == 0)
      continue;
    return emitError() << "dimension " << dim << " of size " << size
                       << " is not divisible by " << *groupSize
                       << ", the total size of axes " << sharding.getDims()[dim]
                       << " of mesh @" << mesh->getSymName();
  }
  if (failed(checkAxesInMesh(
          *mesh, sharding.getPartial(),
          [] { return std::string(" in the partial axes"); }, emitError)))
    return failure();
  // A pending sum is reduced by the collectives' sums, over integers and
  // floats.
  if (!sharding.getPartial().empty() &&
      !tensorType.getElementType().isIntOrFloat())
    return emitError() << "sharding " << sharding
                       << " holds a pending sum, which needs integer or "
                          "floating-point elements; got "
                       << tensorType.getElementType();
  return mesh;
}

ShardingAttr mlir::tp::getOwnSharding(Operation *op) {
  if (auto annotate = dyn_cast<AnnotateOp>(op))
    return annotate.getSharding();
  if (auto reshard = dyn_cast<ReshardOp>(op))
    return reshard.getSharding();
  return {};
}

std::string mlir::tp::formatLocation(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return (file.getFilename().getValue() + ":" + Twine(file.getLine()) + ":" +
            Twine(file.getColumn()))
        .str();
  std::string text;
  llvm::raw_string_ostream os(text);
  loc.print(os);
  return text;
}

SmallVector<int64_t> mlir::tp::getShardShape(ArrayRef<int64_t> globalShape,
                                             ShardingAttr sharding,
                                             MeshOp mesh) {
  SmallVector<int64_t> shape(globalShape);
  for (auto [dim, size] : llvm::enumerate(shape))
    if (!ShapedType::isDynamic(size))
      size /= mesh.getGroupSize(sharding.getDimAxes(dim));
  return shape;
}

SmallVector<int64_t> mlir::tp::getGlobalShape(ArrayRef<int64_t> shardShape,
                                              ShardingAttr sharding,
                                              MeshOp mesh) {
  SmallVector<int64_t> shape(shardShape);
  for (auto [dim, size] : llvm::enumerate(shape))
    if (!ShapedType::isDynamic(size))
      size *= mesh.getGroupSize(sharding.getDimAxes(dim));
  return shape;
}

//===----------------------------------------------------------------------===//
// MeshOp
//===----------------------------------------------------------------------===//

/// `[` (string `=` integer (`,` string `=` integer)*)? `]`
static ParseResult parseMeshAxes(OpAsmParser &parser, ArrayAttr &names,
                                 DenseI64ArrayAttr &sizes) {
  SmallVector<Attribute> nameAttrs;
  SmallVector<int64_t> sizeValues;
  if (parser.parseCommaSeparatedList(
          OpAsmParser::Delimiter::Square,
          [&]() -> ParseResult {
            std::string name;
            int64_t size = 0;
            if (parser.parseString(&name) || parser.parseEqual() ||
                parser.parseInteger(size))
              return failure();
            nameAttrs.push_back(parser.getBuilder().getStringAttr(name));
            sizeValues.push_back(size);
            return success();
          },
          " in the mesh axes"))
    return failure();
  names = parser.getBuilder().getArrayAttr(nameAttrs);
  sizes = parser.getBuilder().getDenseI64ArrayAttr(sizeValues);
  return success();
}

static void printMeshAxes(OpAsmPrinter &printer, MeshOp, ArrayAttr names,
                          DenseI64ArrayAttr sizes) {
  printer << "[";
  llvm::interleaveComma(
      llvm::zip(names, sizes.asArrayRef()), printer, [&](auto pair) {
        auto [name, size] = pair;
        printer.printString(cast<StringAttr>(name).getValue());
        printer << " = " << size;
      });
  printer << "]";
}

LogicalResult MeshOp::verify() {
  ArrayAttr names = getAxisNames();
  ArrayRef<int64_t> sizes = getAxisSizes();
  if (names.size() != sizes.size())
    return emitOpError() << "has " << names.size() << " axis names but "
                         << sizes.size() << " axis sizes";
  if (names.empty())
    return emitOpError() << "@" << getSymName()
                         << " must have at least one axis";
  llvm::StringSet<> seen;
  int64_t devices = 1;
  for (auto [index, nameAttr, size] : llvm::enumerate(names, sizes)) {
    StringRef name = cast<StringAttr>(nameAttr).getValue();
    if (name.empty())
      return emitOpError() << "axis #" << index << " has an empty name";
    if (!seen.insert(name).second)
      return emitOpError() << "axis \"" << name << "\" is declared twice";
    if (size <= 0)
      return emitOpError() << "axis \"" << name << "\" has size " << size
                           << "; expected a positive size";
    if (llvm::MulOverflow(devices, size, devices))
      return emitOpError() << "@" << getSymName()
                           << " has more devices than an int64 can count";
  }
  return success();
}

int64_t MeshOp::getNumDevices() {
  int64_t devices = 1;
  for (int64_t size : getAxisSizes())
    devices *= size;
  return devices;
}

std::optional<unsigned> MeshOp::getAxisIndex(StringRef name) {
  for (auto [index, axis] : llvm::enumerate(getAxisNames()))
    if (cast<StringAttr>(axis).getValue() == name)
      return index;
  return std::nullopt;
}

int64_t MeshOp::getAxisSize(StringRef name) {
  std::optional<unsigned> index = getAxisIndex(name);
  assert(index && "axis must be an axis of the mesh (verify first)");
  return getAxisSizes()[*index];
}

int64_t MeshOp::getGroupSize(ArrayRef<StringRef> axes) {
  int64_t size = 1;
  for (StringRef axis : axes)
    size *= getAxisSize(axis);
  return size;
}

int64_t MeshOp::getGroupSize(ArrayAttr axes) {
  return getGroupSize(tp::getAxisNames(axes));
}

//===----------------------------------------------------------------------===//
// AnnotateOp / ReshardOp
//===----------------------------------------------------------------------===//

template <typename OpTy>
static LogicalResult verifyShardingOpSymbols(OpTy op,
                                             SymbolTableCollection &symbols) {
  return verifyShardingFor(
      op.getSharding(), op.getInput().getType(), op, isInLocalForm(op),
      [&]() { return op.emitOpError(); }, &symbols);
}

LogicalResult AnnotateOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyShardingOpSymbols(*this, symbols);
}

LogicalResult ReshardOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyShardingOpSymbols(*this, symbols);
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

/// Checks an axis list that does not need the mesh: not empty, no empty name,
/// no axis twice.
static LogicalResult verifyAxisList(Operation *op, ArrayAttr axes) {
  if (axes.empty())
    return op->emitOpError() << "needs at least one mesh axis";
  llvm::StringSet<> seen;
  for (Attribute attr : axes) {
    StringRef axis = cast<StringAttr>(attr).getValue();
    if (axis.empty())
      return op->emitOpError() << "mesh axis name must not be empty";
    if (!seen.insert(axis).second)
      return op->emitOpError()
             << "mesh axis \"" << axis << "\" is listed twice";
  }
  return success();
}

/// Checks a dimension index against a rank.
static LogicalResult verifyDimIndex(Operation *op, StringRef what, int64_t dim,
                                    int64_t rank) {
  if (dim < 0 || dim >= rank)
    return op->emitOpError()
           << what << " " << dim << " is out of range for an operand of rank "
           << rank;
  return success();
}

/// Checks that `in` and `out` agree in rank, element type and every dimension
/// not in `changed`; dimensions in `changed` are both dynamic or both static.
static LogicalResult verifySameExcept(Operation *op, ShapedType in,
                                      ShapedType out,
                                      ArrayRef<int64_t> changed) {
  if (in.getRank() != out.getRank())
    return op->emitOpError()
           << "result type " << out << " has rank " << out.getRank()
           << " but operand type " << in << " has rank " << in.getRank();
  if (in.getElementType() != out.getElementType())
    return op->emitOpError()
           << "result element type " << out.getElementType()
           << " differs from operand element type " << in.getElementType();
  for (int64_t dim = 0; dim < in.getRank(); ++dim) {
    int64_t inSize = in.getDimSize(dim), outSize = out.getDimSize(dim);
    if (llvm::is_contained(changed, dim)) {
      if (ShapedType::isDynamic(inSize) != ShapedType::isDynamic(outSize))
        return op->emitOpError()
               << "dimension " << dim
               << " must be dynamic in both operand and result or static in "
                  "both, got "
               << in << " -> " << out;
      continue;
    }
    if (inSize != outSize)
      return op->emitOpError()
             << "result dimension " << dim << " has size "
             << (ShapedType::isDynamic(outSize) ? std::string("?")
                                                : std::to_string(outSize))
             << " but the operand's has "
             << (ShapedType::isDynamic(inSize) ? std::string("?")
                                               : std::to_string(inSize))
             << "; only the collective's dimensions may "
                "change";
  }
  return success();
}

/// Checks that `dim` grows by `groupSize` from `in` to `out`.
static LogicalResult verifyGrownDim(Operation *op, ShapedType in,
                                    ShapedType out, int64_t dim,
                                    int64_t groupSize, ArrayAttr axes) {
  int64_t inSize = in.getDimSize(dim), outSize = out.getDimSize(dim);
  if (ShapedType::isDynamic(inSize) || inSize * groupSize == outSize)
    return success();
  return op->emitOpError() << "result dimension " << dim << " has size "
                           << outSize << " but expected " << inSize * groupSize
                           << " (operand size " << inSize << " x group size "
                           << groupSize << " of axes " << axes << ")";
}

/// Checks that `dim` shrinks by `groupSize` from `in` to `out`.
static LogicalResult verifyShrunkDim(Operation *op, ShapedType in,
                                     ShapedType out, int64_t dim,
                                     int64_t groupSize, ArrayAttr axes) {
  int64_t inSize = in.getDimSize(dim), outSize = out.getDimSize(dim);
  if (ShapedType::isDynamic(inSize))
    return success();
  if (inSize % groupSize != 0)
    return op->emitOpError() << "operand dimension " << dim << " of size "
                             << inSize << " is not divisible by the group size "
                             << groupSize << " of axes " << axes;
  if (inSize / groupSize != outSize)
    return op->emitOpError()
           << "result dimension " << dim << " has size " << outSize
           << " but expected " << inSize / groupSize << " (operand size "
           << inSize << " / group size " << groupSize << " of axes " << axes
           << ")";
  return success();
}

/// Looks up the collective's mesh and checks its axes against it.
static FailureOr<MeshOp> verifyCollectiveMesh(Operation *op,
                                              FlatSymbolRefAttr meshRef,
                                              ArrayAttr axes,
                                              SymbolTableCollection &symbols) {
  auto emitError = [op]() { return op->emitOpError(); };
  FailureOr<MeshOp> mesh = lookupMesh(op, meshRef, &symbols, emitError);
  if (failed(mesh) ||
      failed(checkAxesInMesh(
          *mesh, axes, [] { return std::string(); }, emitError)))
    return failure();
  return mesh;
}

/// The type `input` has after dimension `dim` is multiplied (`grow`) or
/// divided by the group size of `axes` on `mesh`.
static RankedTensorType resizedType(Value input, MeshOp mesh,
                                    ArrayRef<StringRef> axes, int64_t dim,
                                    bool grow) {
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> shape(type.getShape());
  int64_t groupSize = mesh.getGroupSize(axes);
  if (!ShapedType::isDynamic(shape[dim]))
    shape[dim] = grow ? shape[dim] * groupSize : shape[dim] / groupSize;
  return RankedTensorType::get(shape, type.getElementType(),
                               type.getEncoding());
}

static ArrayAttr toArrayAttr(Builder &b, ArrayRef<StringRef> axes) {
  return b.getStrArrayAttr(axes);
}

/// A reduction kind as a bare keyword: `sum`, `max` or `min`.
static ParseResult parseReductionKind(OpAsmParser &parser,
                                      ReductionKindAttr &kind) {
  llvm::SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseKeyword(&keyword))
    return failure();
  std::optional<ReductionKind> value = symbolizeReductionKind(keyword);
  if (!value)
    return parser.emitError(loc, "unknown reduction '")
           << keyword << "'; expected one of sum, max, min";
  kind = ReductionKindAttr::get(parser.getContext(), *value);
  return success();
}

static void printReductionKind(OpAsmPrinter &printer, Operation *,
                               ReductionKindAttr kind) {
  printer << stringifyReductionKind(kind.getValue());
}

/// The tensor form has a result and no `into` buffer; the buffer form has
/// an `into` buffer and no result; the operand matches the form.
template <typename OpTy> static LogicalResult verifyForm(OpTy op) {
  bool isMemRef = isa<MemRefType>(op.getInput().getType());
  if (op.hasBufferSemantics() != isMemRef)
    return op.emitOpError()
           << (isMemRef ? "with a memref operand writes an `into` memref "
                          "and has no result"
                        : "with a tensor operand has a tensor result and no "
                          "`into` buffer");
  if (op.hasBufferSemantics() == static_cast<bool>(op.getResult()))
    return op.emitOpError() << (isMemRef ? "on memrefs has no result"
                                         : "on tensors has one result");
  return success();
}

void mlir::tp::getCollectiveEffects(
    Operation *op,
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  // The tensor form has none; the buffer form reads its operand (#0) and
  // writes `into` (#1).
  if (op->getNumOperands() < 2)
    return;
  effects.emplace_back(MemoryEffects::Read::get(), &op->getOpOperand(0),
                       SideEffects::DefaultResource::get());
  effects.emplace_back(MemoryEffects::Write::get(), &op->getOpOperand(1),
                       SideEffects::DefaultResource::get());
}

/// The types of a data collective: the operand's, then (after `->`) the
/// result's or, in the buffer form, the `into` buffer's. Which of the two is
/// known from whether an `into` operand was parsed.
static ParseResult
parseResizedTypes(OpAsmParser &parser, Type &inputType, Type &outputType,
                  Type &resultType,
                  std::optional<OpAsmParser::UnresolvedOperand> output) {
  Type produced;
  if (parser.parseType(inputType) || parser.parseArrow() ||
      parser.parseType(produced))
    return failure();
  (output ? outputType : resultType) = produced;
  return success();
}

static void printResizedTypes(OpAsmPrinter &printer, Operation *,
                              Type inputType, Type outputType, Type resultType,
                              Value) {
  printer << inputType << " -> " << (outputType ? outputType : resultType);
}

/// all_reduce keeps its shape: `: T` for operand and result (or `into`), or
/// `: T -> U` when they differ in layout (a strided operand buffer).
static ParseResult
parseSameTypes(OpAsmParser &parser, Type &inputType, Type &outputType,
               Type &resultType,
               std::optional<OpAsmParser::UnresolvedOperand> output) {
  if (parser.parseType(inputType))
    return failure();
  Type produced = inputType;
  if (succeeded(parser.parseOptionalArrow()) && parser.parseType(produced))
    return failure();
  (output ? outputType : resultType) = produced;
  return success();
}

static void printSameTypes(OpAsmPrinter &printer, Operation *, Type inputType,
                           Type outputType, Type resultType, Value) {
  printer << inputType;
  Type produced = outputType ? outputType : resultType;
  if (produced != inputType)
    printer << " -> " << produced;
}

// all_reduce

LogicalResult AllReduceOp::verify() {
  if (failed(verifyForm(*this)) || failed(verifyAxisList(*this, getAxes())))
    return failure();
  return verifySameExcept(*this, getInputType(), getOutputType(), {});
}

LogicalResult AllReduceOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyCollectiveMesh(*this, getMeshAttr(), getAxes(), symbols);
}

CollectiveKind AllReduceOp::getCollectiveKind() {
  return CollectiveKind::AllReduce;
}

std::optional<ReductionKind> AllReduceOp::getReduction() { return getKind(); }

SmallVector<int64_t> AllReduceOp::getCollectiveDims() { return {}; }

// all_gather

LogicalResult AllGatherOp::verify() {
  if (failed(verifyForm(*this)))
    return failure();
  if (failed(verifyAxisList(*this, getAxes())) ||
      failed(verifyDimIndex(*this, "dim", getDim(), getInputType().getRank())))
    return failure();
  return verifySameExcept(*this, getInputType(), getOutputType(),
                          {static_cast<int64_t>(getDim())});
}

LogicalResult AllGatherOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<MeshOp> mesh =
      verifyCollectiveMesh(*this, getMeshAttr(), getAxes(), symbols);
  if (failed(mesh))
    return failure();
  return verifyGrownDim(*this, getInputType(), getOutputType(), getDim(),
                        getGroupSize(*mesh), getAxes());
}

CollectiveKind AllGatherOp::getCollectiveKind() {
  return CollectiveKind::AllGather;
}

std::optional<ReductionKind> AllGatherOp::getReduction() {
  return std::nullopt;
}

SmallVector<int64_t> AllGatherOp::getCollectiveDims() {
  return {static_cast<int64_t>(getDim())};
}

void AllGatherOp::build(OpBuilder &b, OperationState &state, Value input,
                        MeshOp mesh, ArrayRef<StringRef> axes, int64_t dim) {
  build(b, state, resizedType(input, mesh, axes, dim, /*grow=*/true), input,
        mesh.getSymName(), toArrayAttr(b, axes), dim, /*output=*/Value());
}

// reduce_scatter

LogicalResult ReduceScatterOp::verify() {
  if (failed(verifyForm(*this)))
    return failure();
  if (failed(verifyAxisList(*this, getAxes())) ||
      failed(verifyDimIndex(*this, "dim", getDim(), getInputType().getRank())))
    return failure();
  return verifySameExcept(*this, getInputType(), getOutputType(),
                          {static_cast<int64_t>(getDim())});
}

LogicalResult
ReduceScatterOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<MeshOp> mesh =
      verifyCollectiveMesh(*this, getMeshAttr(), getAxes(), symbols);
  if (failed(mesh))
    return failure();
  return verifyShrunkDim(*this, getInputType(), getOutputType(), getDim(),
                         getGroupSize(*mesh), getAxes());
}

CollectiveKind ReduceScatterOp::getCollectiveKind() {
  return CollectiveKind::ReduceScatter;
}

std::optional<ReductionKind> ReduceScatterOp::getReduction() {
  return getKind();
}

SmallVector<int64_t> ReduceScatterOp::getCollectiveDims() {
  return {static_cast<int64_t>(getDim())};
}

void ReduceScatterOp::build(OpBuilder &b, OperationState &state,
                            ReductionKind kind, Value input, MeshOp mesh,
                            ArrayRef<StringRef> axes, int64_t dim) {
  build(b, state, resizedType(input, mesh, axes, dim, /*grow=*/false), kind,
        input, mesh.getSymName(), toArrayAttr(b, axes), dim,
        /*output=*/Value());
}

// all_to_all

LogicalResult AllToAllOp::verify() {
  if (failed(verifyForm(*this)))
    return failure();
  int64_t rank = getInputType().getRank();
  if (failed(verifyAxisList(*this, getAxes())) ||
      failed(verifyDimIndex(*this, "split dimension", getSplitDim(), rank)) ||
      failed(verifyDimIndex(*this, "concat dimension", getConcatDim(), rank)))
    return failure();
  if (getSplitDim() == getConcatDim())
    return emitOpError() << "split and concat dimensions must differ, both are "
                         << getSplitDim();
  return verifySameExcept(*this, getInputType(), getOutputType(),
                          {static_cast<int64_t>(getSplitDim()),
                           static_cast<int64_t>(getConcatDim())});
}

LogicalResult AllToAllOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<MeshOp> mesh =
      verifyCollectiveMesh(*this, getMeshAttr(), getAxes(), symbols);
  if (failed(mesh))
    return failure();
  int64_t groupSize = getGroupSize(*mesh);
  if (failed(verifyShrunkDim(*this, getInputType(), getOutputType(),
                             getSplitDim(), groupSize, getAxes())))
    return failure();
  return verifyGrownDim(*this, getInputType(), getOutputType(), getConcatDim(),
                        groupSize, getAxes());
}

CollectiveKind AllToAllOp::getCollectiveKind() {
  return CollectiveKind::AllToAll;
}

std::optional<ReductionKind> AllToAllOp::getReduction() { return std::nullopt; }

SmallVector<int64_t> AllToAllOp::getCollectiveDims() {
  return {static_cast<int64_t>(getSplitDim()),
          static_cast<int64_t>(getConcatDim())};
}

void AllToAllOp::build(OpBuilder &b, OperationState &state, Value input,
                       MeshOp mesh, ArrayRef<StringRef> axes, int64_t splitDim,
                       int64_t concatDim) {
  RankedTensorType split =
      resizedType(input, mesh, axes, splitDim, /*grow=*/false);
  SmallVector<int64_t> shape(split.getShape());
  int64_t groupSize = mesh.getGroupSize(axes);
  if (!ShapedType::isDynamic(shape[concatDim]))
    shape[concatDim] *= groupSize;
  build(b, state, split.clone(shape), input, mesh.getSymName(),
        toArrayAttr(b, axes), splitDim, concatDim, /*output=*/Value());
}

// all_slice

LogicalResult AllSliceOp::verify() {
  if (failed(verifyForm(*this)))
    return failure();
  if (failed(verifyAxisList(*this, getAxes())) ||
      failed(verifyDimIndex(*this, "dim", getDim(), getInputType().getRank())))
    return failure();
  return verifySameExcept(*this, getInputType(), getOutputType(),
                          {static_cast<int64_t>(getDim())});
}

LogicalResult AllSliceOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<MeshOp> mesh =
      verifyCollectiveMesh(*this, getMeshAttr(), getAxes(), symbols);
  if (failed(mesh))
    return failure();
  return verifyShrunkDim(*this, getInputType(), getOutputType(), getDim(),
                         getGroupSize(*mesh), getAxes());
}

CollectiveKind AllSliceOp::getCollectiveKind() {
  return CollectiveKind::AllSlice;
}

std::optional<ReductionKind> AllSliceOp::getReduction() { return std::nullopt; }

SmallVector<int64_t> AllSliceOp::getCollectiveDims() {
  return {static_cast<int64_t>(getDim())};
}

void AllSliceOp::build(OpBuilder &b, OperationState &state, Value input,
                       MeshOp mesh, ArrayRef<StringRef> axes, int64_t dim) {
  build(b, state, resizedType(input, mesh, axes, dim, /*grow=*/false), input,
        mesh.getSymName(), toArrayAttr(b, axes), dim, /*output=*/Value());
}

// axis_index

LogicalResult AxisIndexOp::verify() { return verifyAxisList(*this, getAxes()); }

LogicalResult AxisIndexOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyCollectiveMesh(*this, getMeshAttr(), getAxes(), symbols);
}

void mlir::tp::removeDiscardableAttrs(Operation *root,
                                      function_ref<bool(StringRef)> drop) {
  root->walk([&](Operation *op) {
    for (NamedAttribute attr : llvm::to_vector(op->getDiscardableAttrs()))
      if (drop(attr.getName().getValue()))
        op->removeDiscardableAttr(attr.getName());
    auto func = dyn_cast<FunctionOpInterface>(op);
    if (!func)
      return;
    // Each argument's or result's attributes without the dropped ones, set
    // all at once: the function holds them in one array, which setting one
    // entry rebuilds (quadratic in a 16,000-weight driver).
    auto kept = [&](ArrayAttr all, unsigned count,
                    SmallVectorImpl<DictionaryAttr> &dicts) {
      if (!all)
        return false;
      bool changed = false;
      for (unsigned i = 0; i < count; ++i) {
        auto dict = dyn_cast_or_null<DictionaryAttr>(all[i]);
        if (!dict || llvm::none_of(dict, [&](NamedAttribute attr) {
              return drop(attr.getName().getValue());
            })) {
          dicts.push_back(dict);
          continue;
        }
        SmallVector<NamedAttribute> left;
        for (NamedAttribute attr : dict)
          if (!drop(attr.getName().getValue()))
            left.push_back(attr);
        dicts.push_back(DictionaryAttr::get(op->getContext(), left));
        changed = true;
      }
      return changed;
    };
    SmallVector<DictionaryAttr> dicts;
    if (kept(func.getAllArgAttrs(), func.getNumArguments(), dicts))
      func.setAllArgAttrs(dicts);
    dicts.clear();
    if (kept(func.getAllResultAttrs(), func.getNumResults(), dicts))
      func.setAllResultAttrs(dicts);
  });
}

#define GET_OP_CLASSES
#include "tp/Dialect/TP/IR/TPOps.cpp.inc"
