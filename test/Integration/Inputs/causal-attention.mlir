// Causal self-attention on Q, K, V laid out [batch, seq, heads, dim], the
// mask made from the indices (a key after the query scores -inf), heads
// split over 2 devices; the softmax as a decomposed amax writes it (a max
// from -inf, exp(s - max), a sum, a division). Used by gpu-mapping.test:
// tp-fuse-attention makes it one kernel, the emulation runs it, and tp-run
// compares it with the unsharded plain lowering.

tp.mesh @world ["tp" = 2]

#q = affine_map<(b, h, i, j, d) -> (b, i, h, d)>
#k = affine_map<(b, h, i, j, d) -> (b, j, h, d)>
#s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#all = affine_map<(b, h, i, j) -> (b, h, i, j)>
#row = affine_map<(b, h, i, j) -> (b, h, i)>
#p = affine_map<(b, i, h, e, j) -> (b, h, i, j)>
#v = affine_map<(b, i, h, e, j) -> (b, j, h, e)>
#o = affine_map<(b, i, h, e, j) -> (b, i, h, e)>

func.func @causal(%q: tensor<2x40x4x24xf32> {tp.sharding = #tp.sharding<@world, [{}, {}, {"tp"}, {}]>},
                  %k: tensor<2x40x4x24xf32> {tp.sharding = #tp.sharding<@world, [{}, {}, {"tp"}, {}]>},
                  %v: tensor<2x40x4x24xf32> {tp.sharding = #tp.sharding<@world, [{}, {}, {"tp"}, {}]>})
    -> (tensor<2x40x4x24xf32> {tp.sharding = #tp.sharding<@world, [{}, {}, {}, {}]>}) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %scale = arith.constant 0.2041241 : f32
  %es = tensor.empty() : tensor<2x4x40x40xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x40x40xf32>) -> tensor<2x4x40x40xf32>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x40x4x24xf32>, tensor<2x40x4x24xf32>) outs(%zs : tensor<2x4x40x40xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
  } -> tensor<2x4x40x40xf32>
  %masked = linalg.generic {indexing_maps = [#all, #all], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x4x40x40xf32>) outs(%es : tensor<2x4x40x40xf32>) {
    ^bb0(%x: f32, %o: f32):
      %i = linalg.index 2 : index
      %j = linalg.index 3 : index
      %after = arith.cmpi ugt, %j, %i : index
      %scaled = arith.mulf %x, %scale : f32
      %r = arith.select %after, %ninf, %scaled : f32
      linalg.yield %r : f32
  } -> tensor<2x4x40x40xf32>
  %er = tensor.empty() : tensor<2x4x40xf32>
  %mr = linalg.fill ins(%ninf : f32) outs(%er : tensor<2x4x40xf32>) -> tensor<2x4x40xf32>
  %max = linalg.generic {indexing_maps = [#all, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%masked : tensor<2x4x40x40xf32>) outs(%mr : tensor<2x4x40xf32>) {
    ^bb0(%x: f32, %acc: f32):
      %r = arith.maximumf %x, %acc : f32
      linalg.yield %r : f32
  } -> tensor<2x4x40xf32>
  %e = linalg.generic {indexing_maps = [#all, #row, #all], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%masked, %max : tensor<2x4x40x40xf32>, tensor<2x4x40xf32>) outs(%es : tensor<2x4x40x40xf32>) {
    ^bb0(%x: f32, %m: f32, %o: f32):
      %d = arith.subf %x, %m : f32
      %r = math.exp %d : f32
      linalg.yield %r : f32
  } -> tensor<2x4x40x40xf32>
  %zr = linalg.fill ins(%zero : f32) outs(%er : tensor<2x4x40xf32>) -> tensor<2x4x40xf32>
  %sum = linalg.generic {indexing_maps = [#all, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%e : tensor<2x4x40x40xf32>) outs(%zr : tensor<2x4x40xf32>) {
    ^bb0(%x: f32, %acc: f32):
      %r = arith.addf %x, %acc : f32
      linalg.yield %r : f32
  } -> tensor<2x4x40xf32>
  %prob = linalg.generic {indexing_maps = [#all, #row, #all], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%e, %sum : tensor<2x4x40x40xf32>, tensor<2x4x40xf32>) outs(%es : tensor<2x4x40x40xf32>) {
    ^bb0(%x: f32, %t: f32, %o: f32):
      %r = arith.divf %x, %t : f32
      linalg.yield %r : f32
  } -> tensor<2x4x40x40xf32>
  %eo = tensor.empty() : tensor<2x40x4x24xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x40x4x24xf32>) -> tensor<2x40x4x24xf32>
  %out = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%prob, %v : tensor<2x4x40x40xf32>, tensor<2x40x4x24xf32>) outs(%zo : tensor<2x40x4x24xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
  } -> tensor<2x40x4x24xf32>
  return %out : tensor<2x40x4x24xf32>
}
