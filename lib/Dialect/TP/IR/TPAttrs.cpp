//===- TPAttrs.cpp - tp dialect attributes --------------------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/IR/TPAttrs.h"
#include "tp/Dialect/TP/IR/TPDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tp;

#include "tp/Dialect/TP/IR/TPEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "tp/Dialect/TP/IR/TPAttrs.cpp.inc"

void TPDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tp/Dialect/TP/IR/TPAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// ShardingAttr
//===----------------------------------------------------------------------===//

SmallVector<StringRef> mlir::tp::getAxisNames(ArrayAttr array) {
  SmallVector<StringRef> result;
  for (Attribute attr : array)
    result.push_back(cast<StringAttr>(attr).getValue());
  return result;
}

static ArrayAttr toArrayAttr(MLIRContext *ctx, ArrayRef<StringRef> strings) {
  SmallVector<Attribute> attrs;
  for (StringRef s : strings)
    attrs.push_back(StringAttr::get(ctx, s));
  return ArrayAttr::get(ctx, attrs);
}

ShardingAttr ShardingAttr::get(MLIRContext *ctx, FlatSymbolRefAttr mesh,
                               ArrayRef<SmallVector<StringRef>> dims,
                               ArrayRef<StringRef> partial) {
  SmallVector<ArrayAttr> dimAttrs;
  for (const SmallVector<StringRef> &axes : dims)
    dimAttrs.push_back(toArrayAttr(ctx, axes));
  return get(ctx, mesh, dimAttrs, toArrayAttr(ctx, partial));
}

SmallVector<StringRef> ShardingAttr::getDimAxes(unsigned dim) const {
  return getAxisNames(getDims()[dim]);
}

SmallVector<StringRef> ShardingAttr::getPartialAxes() const {
  return getAxisNames(getPartial());
}

bool ShardingAttr::isFullyReplicated() const {
  return !isPartial() &&
         llvm::all_of(getDims(), [](ArrayAttr axes) { return axes.empty(); });
}

SmallVector<StringRef> ShardingAttr::getUsedAxes() const {
  SmallVector<StringRef> used;
  for (ArrayAttr axes : getDims())
    llvm::append_range(used, getAxisNames(axes));
  llvm::append_range(used, getPartialAxes());
  return used;
}

LogicalResult ShardingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   FlatSymbolRefAttr mesh,
                                   ArrayRef<ArrayAttr> dims,
                                   ArrayAttr partial) {
  if (!mesh)
    return emitError() << "sharding needs a mesh symbol";
  // Where each axis was first seen: a dimension index, or -1 for partial. A
  // sharding names a handful of axes (uniqued strings): a short list.
  SmallVector<std::pair<StringAttr, int64_t>, 8> firstUse;
  auto checkAxis = [&](Attribute attr, int64_t where) -> LogicalResult {
    auto axis = dyn_cast_or_null<StringAttr>(attr);
    if (!axis)
      return emitError() << "mesh axis must be a string, got " << attr;
    if (axis.getValue().empty())
      return emitError() << "mesh axis name must not be empty";
    const auto *it = llvm::find_if(
        firstUse, [&](const auto &use) { return use.first == axis; });
    if (it == firstUse.end()) {
      firstUse.push_back({axis, where});
      return success();
    }
    int64_t first = it->second;
    if (where == -1)
      return emitError() << "partial axis \"" << axis.getValue()
                         << "\" also splits dimension " << first;
    if (first == where)
      return emitError() << "mesh axis \"" << axis.getValue()
                         << "\" is used twice in dimension " << where;
    return emitError() << "mesh axis \"" << axis.getValue()
                       << "\" splits both dimension " << first
                       << " and dimension " << where;
  };
  for (auto [dim, axes] : llvm::enumerate(dims)) {
    if (!axes)
      return emitError() << "dimension " << dim << " has no axis list";
    for (Attribute axis : axes)
      if (failed(checkAxis(axis, dim)))
        return failure();
  }
  if (!partial)
    return emitError() << "sharding needs a (possibly empty) partial list";
  for (auto [i, axis] : llvm::enumerate(partial)) {
    if (auto name = dyn_cast<StringAttr>(axis);
        name && llvm::is_contained(partial.getValue().take_front(i), axis))
      return emitError() << "partial axis \"" << name.getValue()
                         << "\" is listed twice";
    if (failed(checkAxis(axis, -1)))
      return failure();
  }
  return success();
}

/// Parses `[` (string (`,` string)*)? `]` or `{` ... `}`.
static ParseResult parseAxisList(AsmParser &parser,
                                 AsmParser::Delimiter delimiter,
                                 SmallVectorImpl<Attribute> &axes) {
  return parser.parseCommaSeparatedList(delimiter, [&]() -> ParseResult {
    std::string name;
    if (parser.parseString(&name))
      return failure();
    axes.push_back(parser.getBuilder().getStringAttr(name));
    return success();
  });
}

Attribute ShardingAttr::parse(AsmParser &parser, Type type) {
  MLIRContext *ctx = parser.getContext();
  llvm::SMLoc loc = parser.getCurrentLocation();
  if (type) {
    parser.emitError(loc, "a #tp.sharding has no type, got ") << type;
    return {};
  }
  StringAttr meshName;
  SmallVector<ArrayAttr> dims;
  SmallVector<Attribute> partial;
  if (parser.parseLess())
    return {};
  if (failed(parser.parseOptionalSymbolName(meshName))) {
    parser.emitError(parser.getCurrentLocation(),
                     "expected the mesh as a symbol, e.g. @world");
    return {};
  }
  auto mesh = FlatSymbolRefAttr::get(meshName);
  if (parser.parseComma())
    return {};
  if (parser.parseCommaSeparatedList(
          AsmParser::Delimiter::Square,
          [&]() -> ParseResult {
            SmallVector<Attribute> axes;
            if (parseAxisList(parser, AsmParser::Delimiter::Braces, axes))
              return failure();
            dims.push_back(ArrayAttr::get(ctx, axes));
            return success();
          },
          " in the list of dimension shardings"))
    return {};
  if (succeeded(parser.parseOptionalComma())) {
    if (parser.parseKeyword("partial") || parser.parseEqual() ||
        parseAxisList(parser, AsmParser::Delimiter::Square, partial))
      return {};
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<ShardingAttr>(loc, ctx, mesh, dims,
                                         ArrayAttr::get(ctx, partial));
}

static void printAxisList(AsmPrinter &printer, ArrayAttr axes) {
  llvm::interleaveComma(axes, printer, [&](Attribute axis) {
    printer.printString(cast<StringAttr>(axis).getValue());
  });
}

void ShardingAttr::print(AsmPrinter &printer) const {
  printer << "<" << getMesh() << ", [";
  llvm::interleaveComma(getDims(), printer, [&](ArrayAttr axes) {
    printer << "{";
    printAxisList(printer, axes);
    printer << "}";
  });
  printer << "]";
  if (isPartial()) {
    printer << ", partial = [";
    printAxisList(printer, getPartial());
    printer << "]";
  }
  printer << ">";
}
