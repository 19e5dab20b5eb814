//===- FactorProjection.cpp - Shardings seen as factor shardings ----------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/Transforms/FactorProjection.h"

#include "tp/Dialect/TP/IR/TPOps.h"
#include "tp/Dialect/TP/Transforms/CostModel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::tp;

//===----------------------------------------------------------------------===//
// TensorSharding
//===----------------------------------------------------------------------===//

bool TensorSharding::isSplit() const {
  return llvm::any_of(dims, [](const AxisList &d) { return !d.empty(); });
}

bool TensorSharding::hasAxes() const { return !partial.empty() || isSplit(); }

TensorSharding TensorSharding::replicated(unsigned rank) {
  TensorSharding s;
  s.dims.resize(rank);
  return s;
}

TensorSharding TensorSharding::fromAttr(ShardingAttr attr) {
  TensorSharding s;
  for (unsigned d = 0; d < attr.getRank(); ++d)
    s.dims.push_back(AxisList(attr.getDimAxes(d)));
  s.partial = AxisList(attr.getPartialAxes());
  return s;
}

ShardingAttr TensorSharding::toAttr(MLIRContext *ctx,
                                    FlatSymbolRefAttr mesh) const {
  SmallVector<SmallVector<StringRef>> d;
  for (const AxisList &axes : dims)
    d.push_back(SmallVector<StringRef>(axes.begin(), axes.end()));
  return ShardingAttr::get(ctx, mesh, d, partial);
}

/// Each dimension's axes end with the marker, the partial axes with null.
static const char kDimEndMarker = 0;

void TensorSharding::appendKey(SmallVectorImpl<const void *> &key) const {
  for (const AxisList &axes : dims) {
    for (StringRef a : axes)
      key.push_back(a.data());
    key.push_back(&kDimEndMarker);
  }
  for (StringRef a : partial)
    key.push_back(a.data());
  key.push_back(nullptr);
}

ShardingAttr ShardingAttrCache::get(const TensorSharding &s) {
  SmallVector<const void *, 16> key;
  s.appendKey(key);
  auto it = attrs.find(ArrayRef<const void *>(key));
  if (it != attrs.end())
    return it->second;
  ShardingAttr attr = s.toAttr(ctx, mesh);
  const void **stored = keys.Allocate<const void *>(key.size());
  llvm::copy(key, stored);
  attrs[ArrayRef<const void *>(stored, key.size())] = attr;
  return attr;
}

ArrayAttr ShardingAttrCache::getResultsArray(ArrayRef<Attribute> shardings) {
  if (shardings.size() != 1)
    return ArrayAttr::get(ctx, shardings);
  ArrayAttr &cached = singleResultArrays[shardings.front()];
  if (!cached)
    cached = ArrayAttr::get(ctx, shardings);
  return cached;
}

const TensorSharding *ShardingAttrCache::intern(ShardingAttr attr,
                                                const TensorSharding &s) {
  auto [it, inserted] = stored.try_emplace(attr, nullptr);
  if (inserted) {
    storage.push_back(s);
    it->second = &storage.back();
  }
  return it->second;
}

const TensorSharding *ShardingAttrCache::intern(ShardingAttr attr) {
  auto [it, inserted] = stored.try_emplace(attr, nullptr);
  if (inserted) {
    storage.push_back(TensorSharding::fromAttr(attr));
    it->second = &storage.back();
  }
  return it->second;
}

bool mlir::tp::extendsSharding(const TensorSharding &from,
                               const TensorSharding &to) {
  if (from.dims.size() != to.dims.size())
    return false;
  if (!from.partial.empty() && from.partial != to.partial)
    return false;
  for (auto [a, b] : llvm::zip(from.dims, to.dims))
    if (a.size() > b.size() || !std::equal(a.begin(), a.end(), b.begin()))
      return false;
  return from != to;
}

//===----------------------------------------------------------------------===//
// MeshAxes
//===----------------------------------------------------------------------===//

MeshAxes::MeshAxes(MeshOp mesh) {
  for (auto [name, size] : llvm::zip(mesh.getAxisNames(), mesh.getAxisSizes()))
    axes.push_back({cast<StringAttr>(name).getValue(), size});
}

MeshAxes::MeshAxes(ArrayRef<std::pair<StringRef, int64_t>> axes)
    : axes(axes.begin(), axes.end()) {}

int64_t MeshAxes::size(StringRef axis) const {
  for (const auto &[name, size] : axes)
    if (name == axis)
      return size;
  return 1;
}

int64_t MeshAxes::groupSize(ArrayRef<StringRef> group) const {
  int64_t n = 1;
  for (StringRef axis : group)
    n *= size(axis);
  return n;
}

double mlir::tp::localBytes(RankedTensorType type, const TensorSharding &s,
                            const MeshAxes &mesh) {
  double bytes = elementBytes(type.getElementType());
  for (auto [d, size] : llvm::enumerate(type.getShape())) {
    double dim = ShapedType::isDynamic(size) ? 1.0 : static_cast<double>(size);
    if (d < s.dims.size())
      dim /= static_cast<double>(mesh.groupSize(s.dims[d]));
    bytes *= dim;
  }
  return bytes;
}

//===----------------------------------------------------------------------===//
// Projection and composition
//===----------------------------------------------------------------------===//

FactorProjection
mlir::tp::projectSharding(const TensorSharding &s,
                          const ShardingRule::TensorFactors &tf,
                          const ShardingRule &rule, const MeshAxes &mesh) {
  FactorProjection out;
  out.factors.assign(rule.getNumFactors(), {});
  for (auto [dim, factors] : llvm::enumerate(tf)) {
    if (dim >= s.dims.size())
      break;
    ArrayRef<StringRef> axes = s.dims[dim];
    size_t next = 0;
    for (int64_t f : factors) {
      int64_t local = rule.getFactorSize(f);
      // A dynamic factor keeps what the tensor says; its divisibility is
      // checked when sizes are known.
      if (ShapedType::isDynamic(local)) {
        out.factors[f].append(axes.begin() + next, axes.end());
        next = axes.size();
        break;
      }
      while (next < axes.size() && local > 1 &&
             local % mesh.size(axes[next]) == 0) {
        local /= mesh.size(axes[next]);
        out.factors[f].push_back(axes[next++]);
      }
      // Axes may move on to the next factor only once this one is split
      // down to single elements: otherwise the blocks would be strided.
      if (local != 1)
        break;
    }
    if (next != axes.size())
      out.complete = false;
  }
  return out;
}

/// Whether factor `f` split over `axes` leaves single elements, so that a
/// minor factor of the same dimension may be split too.
static bool splitToElements(const ShardingRule &rule, int64_t f,
                            ArrayRef<StringRef> axes, const MeshAxes &mesh) {
  int64_t size = rule.getFactorSize(f);
  return !ShapedType::isDynamic(size) && size / mesh.groupSize(axes) == 1;
}

FailureOr<TensorSharding> mlir::tp::composeSharding(
    const ShardingRule::TensorFactors &tf, const ShardingRule &rule,
    ArrayRef<AxisList> factorAxes, bool isResult, const MeshAxes &mesh) {
  TensorSharding s;
  for (const ShardingRule::DimFactors &factors : tf) {
    AxisList axes;
    bool previousFull = true;
    for (int64_t f : factors) {
      ArrayRef<StringRef> fAxes = factorAxes[f];
      if (!fAxes.empty() && !previousFull)
        return failure();
      llvm::append_range(axes, fAxes);
      previousFull = splitToElements(rule, f, fAxes, mesh);
    }
    s.dims.push_back(axes);
  }
  if (isResult)
    for (unsigned f = 0; f < rule.getNumFactors(); ++f)
      if (rule.getFactorKind(f) == FactorKind::Reduction)
        llvm::append_range(s.partial, factorAxes[f]);
  return s;
}

bool mlir::tp::trimToBlockSplits(
    ArrayRef<const ShardingRule::TensorFactors *> tensors,
    const ShardingRule &rule, MutableArrayRef<AxisList> factorAxes,
    const MeshAxes &mesh) {
  bool trimmed = false;
  bool changed = true;
  while (changed) {
    changed = false;
    for (const ShardingRule::TensorFactors *tf : tensors) {
      for (const ShardingRule::DimFactors &factors : *tf) {
        bool previousFull = true;
        for (int64_t f : factors) {
          if (!factorAxes[f].empty() && !previousFull) {
            factorAxes[f].clear();
            changed = trimmed = true;
          }
          previousFull = splitToElements(rule, f, factorAxes[f], mesh);
        }
      }
    }
  }
  return trimmed;
}

bool mlir::tp::isRematerializable(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def || !isa<RankedTensorType>(v.getType()))
    return false;
  if (isa<tensor::EmptyOp>(def))
    return true;
  if (auto fill = dyn_cast<linalg::FillOp>(def))
    return fill.hasPureTensorSemantics() &&
           isRematerializable(fill.getOutputs().front());
  if (auto constant = dyn_cast<arith::ConstantOp>(def))
    return isa<SplatElementsAttr>(constant.getValue());
  return false;
}
