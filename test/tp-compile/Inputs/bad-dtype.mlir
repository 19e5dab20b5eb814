func.func @f(%x: tensor<4xi8>) {
  return
}
