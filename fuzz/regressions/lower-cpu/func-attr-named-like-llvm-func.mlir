func.func @g(%arg0: tensor<4xf32>) attributes {linkage = @grid} { return }
