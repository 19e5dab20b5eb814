//===- FactorProjection.h - Shardings seen as factor shardings --*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Propagation works on an op's factors (ShardingRule.h), not on its tensors'
// dimensions. Projection reads a tensor's sharding as axes per factor;
// composition goes back, from axes per factor to each tensor's sharding:
//
//   matmul (i, k), (k, j) -> (i, j), with %w : [{}, {"tp"}] (dims k, j)
//     project(%w)           = {i: [], j: ["tp"], k: []}
//     compose(result, j=tp) = [{}, {"tp"}]
//     compose(result, k=tp) = [{}, {}], partial = ["tp"]
//
// A dimension holding several factors (a collapsed [B*S]) splits its axes
// major to minor: the first factor takes axes until it is split down to
// single elements, only then may the next one take any (otherwise the
// device's block would be strided). What a dimension's axes cannot express
// that way is left out of the projection, which then is not complete.
//
//===----------------------------------------------------------------------===//

#ifndef TP_DIALECT_TP_TRANSFORMS_FACTORPROJECTION_H
#define TP_DIALECT_TP_TRANSFORMS_FACTORPROJECTION_H

#include "tp/Dialect/TP/IR/ShardingRule.h"
#include "tp/Dialect/TP/IR/TPAttrs.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Allocator.h"

#include <deque>

namespace mlir::tp {

class MeshOp;

/// Mesh axes, major to minor. Axis names are the data of uniqued StringAttrs
/// (the mesh's, the shardings'), so equal names share storage.
using AxisList = SmallVector<StringRef, 2>;

/// A sharding while propagation builds it: the axes splitting each dimension
/// and the axes of a pending sum. The mesh is the function's.
struct TensorSharding {
  /// Two dimensions inline: a matrix's sharding is copied without a heap
  /// allocation (propagation copies one per op and per operand).
  SmallVector<AxisList, 2> dims;
  AxisList partial;

  bool operator==(const TensorSharding &other) const {
    return dims == other.dims && partial == other.partial;
  }
  bool operator!=(const TensorSharding &other) const {
    return !(*this == other);
  }
  /// Some dimension is split or a sum is pending.
  bool hasAxes() const;
  /// Some dimension is split.
  bool isSplit() const;
  static TensorSharding replicated(unsigned rank);
  static TensorSharding fromAttr(ShardingAttr attr);
  ShardingAttr toAttr(MLIRContext *ctx, FlatSymbolRefAttr mesh) const;
  /// Appends a key that identifies this sharding among those over the same
  /// mesh (axis names by their uniqued storage).
  void appendKey(SmallVectorImpl<const void *> &key) const;
};

/// The attributes of shardings over one mesh, built once per distinct
/// sharding (uniquing every op's attribute in the context is the costly part
/// of writing shardings).
class ShardingAttrCache {
public:
  ShardingAttrCache(MLIRContext *ctx, FlatSymbolRefAttr mesh)
      : ctx(ctx), mesh(mesh) {}
  ShardingAttr get(const TensorSharding &s);
  /// The `tp.shardings` array of an op's results; single-result arrays are
  /// shared.
  ArrayAttr getResultsArray(ArrayRef<Attribute> shardings);

  /// `s`, stored once per distinct sharding (keyed by its attribute) for as
  /// long as this cache lives: maps over a deep model's values hold these
  /// pointers instead of copies of the nested vectors.
  const TensorSharding *intern(const TensorSharding &s) {
    return intern(get(s), s);
  }
  /// The same, when `attr` is `s`'s attribute already.
  const TensorSharding *intern(ShardingAttr attr, const TensorSharding &s);
  /// The stored sharding of `attr`, converted the first time.
  const TensorSharding *intern(ShardingAttr attr);

private:
  MLIRContext *ctx;
  FlatSymbolRefAttr mesh;
  DenseMap<ArrayRef<const void *>, ShardingAttr> attrs;
  DenseMap<Attribute, ArrayAttr> singleResultArrays;
  DenseMap<Attribute, const TensorSharding *> stored;
  std::deque<TensorSharding> storage;
  llvm::BumpPtrAllocator keys;
};

/// True when `to` only adds axes to `from`: the same pending axes (or `from`
/// has none), and each dimension's axes extend `from`'s; false when equal.
bool extendsSharding(const TensorSharding &from, const TensorSharding &to);

/// The sizes of a mesh's axes, by name (meshes have a handful: a linear scan).
class MeshAxes {
public:
  explicit MeshAxes(MeshOp mesh);
  /// For tests: the axes and their sizes, names from uniqued StringAttrs.
  explicit MeshAxes(ArrayRef<std::pair<StringRef, int64_t>> axes);

  /// The size of `axis`; 1 for a name the mesh does not have (the verifier
  /// rejects such shardings before propagation runs).
  int64_t size(StringRef axis) const;
  /// The number of devices `axes` span together.
  int64_t groupSize(ArrayRef<StringRef> axes) const;

private:
  SmallVector<std::pair<StringRef, int64_t>, 4> axes;
};

/// Bytes one device holds of a tensor of `type` sharded by `s` (dynamic sizes
/// count as 1).
double localBytes(RankedTensorType type, const TensorSharding &s,
                  const MeshAxes &mesh);

/// A tensor's sharding as axes per factor of a rule.
struct FactorProjection {
  /// Per factor, the axes splitting it (major to minor).
  SmallVector<AxisList> factors;
  /// Every axis of the sharding found a factor; false when some split is not
  /// a block split of the dimension's factors (that part is left out).
  bool complete = true;
};

/// Projects the sharding `s` of a tensor whose dimensions hold the factors
/// `tf` of `rule`. A dynamic factor takes all its dimension's remaining axes
/// (divisibility is checked where sizes are known).
FactorProjection projectSharding(const TensorSharding &s,
                                 const ShardingRule::TensorFactors &tf,
                                 const ShardingRule &rule,
                                 const MeshAxes &mesh);

/// The sharding of a tensor with factors `tf` when each factor `f` of `rule`
/// is split over `factorAxes[f]`, or failure when a dimension cannot express
/// it as a block split. A result (`isResult`) is pending over the axes of the
/// rule's split reduction factors.
FailureOr<TensorSharding> composeSharding(const ShardingRule::TensorFactors &tf,
                                          const ShardingRule &rule,
                                          ArrayRef<AxisList> factorAxes,
                                          bool isResult, const MeshAxes &mesh);

/// Clears factors of `factorAxes` until every tensor in `tensors` can express
/// the rest as block splits (a factor split after one not split down to
/// single elements in the same dimension loses its axes). Returns true when
/// something was cleared.
bool trimToBlockSplits(ArrayRef<const ShardingRule::TensorFactors *> tensors,
                       const ShardingRule &rule,
                       MutableArrayRef<AxisList> factorAxes,
                       const MeshAxes &mesh);

/// Values that carry no data worth moving: tensor.empty, a fill of one, a
/// splat constant. Any sharding of them is made in place by cloning their
/// producers, so they neither propose shardings nor cost a reshard.
bool isRematerializable(Value v);

} // namespace mlir::tp

#endif // TP_DIALECT_TP_TRANSFORMS_FACTORPROJECTION_H
