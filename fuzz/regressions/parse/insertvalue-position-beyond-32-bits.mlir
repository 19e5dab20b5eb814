llvm.func @f(%s: !llvm.struct<(i32, i32)>, %v: i32) -> !llvm.struct<(i32, i32)> {
  %r = llvm.insertvalue %v, %s[4294967297] : !llvm.struct<(i32, i32)>
  llvm.return %r : !llvm.struct<(i32, i32)>
}
