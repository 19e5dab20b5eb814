// RUN: tp-opt %s --split-input-file --verify-diagnostics

// Tests that a mesh needs at least one axis.

// expected-error @+1 {{'tp.mesh' op @empty must have at least one axis}}
tp.mesh @empty []

// -----

// Tests that a zero axis size is rejected with the axis and the size.

// expected-error @+1 {{'tp.mesh' op axis "tp" has size 0; expected a positive size}}
tp.mesh @zero ["tp" = 0]

// -----

// Tests that a negative axis size is rejected with the axis and the size.

// expected-error @+1 {{'tp.mesh' op axis "dp" has size -2; expected a positive size}}
tp.mesh @negative ["tp" = 4, "dp" = -2]

// -----

// Tests that an axis may not be declared twice.

// expected-error @+1 {{'tp.mesh' op axis "tp" is declared twice}}
tp.mesh @twice ["tp" = 2, "tp" = 2]

// -----

// Tests that an axis name may not be empty.

// expected-error @+1 {{'tp.mesh' op axis #1 has an empty name}}
tp.mesh @unnamed ["tp" = 2, "" = 2]

// -----

// Tests that two meshes may not share a symbol.

// expected-note @+1 {{see existing symbol definition here}}
tp.mesh @world ["tp" = 4]
// expected-error @+1 {{redefinition of symbol named 'world'}}
tp.mesh @world ["tp" = 2]

// -----

// Tests that a mesh sits directly in a module, not in a function.

func.func @f() {
  // expected-error @+1 {{'tp.mesh' op expects parent op 'builtin.module'}}
  tp.mesh @inner ["tp" = 2]
  return
}

// -----

// Tests that the generic form cannot give more axis names than sizes.

// expected-error @+1 {{'tp.mesh' op has 2 axis names but 1 axis sizes}}
"tp.mesh"() <{sym_name = "m", axis_names = ["a", "b"], axis_sizes = array<i64: 2>}> : () -> ()

// -----

// Tests that a mesh whose device count overflows is rejected.

// expected-error @+1 {{'tp.mesh' op @huge has more devices than an int64 can count}}
tp.mesh @huge ["a" = 4294967296, "b" = 4294967296]

// -----

// Tests that axis names must be strings in the generic form.

// expected-error @+1 {{'tp.mesh' op attribute 'axis_names' failed to satisfy constraint: string array attribute}}
"tp.mesh"() <{sym_name = "m", axis_names = [1], axis_sizes = array<i64: 2>}> : () -> ()
