"""MLIR test kernels (gpu.func bodies) compiled by LLVM for the launch / scheduler tests."""

# 4 waves exchange data through LDS, `n` rounds (a runtime loop), two barriers a round:
#   s[t] = v; barrier; v = 3 * v + s[(t + 32) % 128] ^ round; barrier
LDS_RING = """
gpu.func @ring(%X: memref<1024xi32>, %Y: memref<1024xi32>, %n: index)
    workgroup(%s: memref<128xi32, #gpu.address_space<workgroup>>)
    kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
  %t = gpu.thread_id x
  %b = gpu.block_id x
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %c3 = arith.constant 3 : i32
  %base = arith.muli %b, %c128 : index
  %g = arith.addi %base, %t : index
  %v0 = memref.load %X[%g] : memref<1024xi32>
  %nb = arith.addi %t, %c32 : index
  %nbr = arith.remui %nb, %c128 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%v = %v0) -> (i32) {
    memref.store %v, %s[%t] : memref<128xi32, #gpu.address_space<workgroup>>
    gpu.barrier
    %o = memref.load %s[%nbr] : memref<128xi32, #gpu.address_space<workgroup>>
    %ii = arith.index_cast %i : index to i32
    %ox = arith.xori %o, %ii : i32
    %v3 = arith.muli %v, %c3 : i32
    %vn = arith.addi %v3, %ox : i32
    gpu.barrier
    scf.yield %vn : i32
  }
  memref.store %r, %Y[%g] : memref<1024xi32>
  gpu.return
}
"""

# Per-lane divergence (if/else chain, a data-dependent while loop) and per-workgroup
# (scalar) divergence: odd workgroups take another path and loop block_id times.
DIVERGE = """
gpu.func @diverge(%X: memref<512xi32>, %Y: memref<512xi32>)
    kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
  %t = gpu.thread_id x
  %b = gpu.block_id x
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %i0 = arith.constant 0 : i32
  %i1 = arith.constant 1 : i32
  %i3 = arith.constant 3 : i32
  %i7 = arith.constant 7 : i32
  %bo = arith.muli %b, %c64 : index
  %g = arith.addi %t, %bo : index
  %x = memref.load %X[%g] : memref<512xi32>
  %m = arith.remui %x, %i3 : i32
  %is0 = arith.cmpi eq, %m, %i0 : i32
  %a = scf.if %is0 -> (i32) {
    %y = arith.muli %x, %i7 : i32
    scf.yield %y : i32
  } else {
    %is1 = arith.cmpi eq, %m, %i1 : i32
    %z = scf.if %is1 -> (i32) {
      %y = arith.addi %x, %i7 : i32
      scf.yield %y : i32
    } else {
      %y = arith.subi %x, %i1 : i32
      scf.yield %y : i32
    }
    scf.yield %z : i32
  }
  %steps:2 = scf.while (%v = %x, %k = %i0) : (i32, i32) -> (i32, i32) {
    %more = arith.cmpi ugt, %v, %i1 : i32
    scf.condition(%more) %v, %k : i32, i32
  } do {
  ^bb0(%v: i32, %k: i32):
    %odd = arith.andi %v, %i1 : i32
    %isodd = arith.cmpi ne, %odd, %i0 : i32
    %vm = arith.muli %v, %i3 : i32
    %v3 = arith.addi %vm, %i1 : i32
    %vh = arith.shrui %v, %i1 : i32
    %vn = arith.select %isodd, %v3, %vh : i32
    %k1 = arith.addi %k, %i1 : i32
    scf.yield %vn, %k1 : i32, i32
  }
  %bm = arith.remui %b, %c2 : index
  %bodd = arith.cmpi eq, %bm, %c1 : index
  %w = scf.if %bodd -> (i32) {
    %acc = scf.for %j = %c0 to %b step %c1 iter_args(%q = %a) -> (i32) {
      %q2 = arith.muli %q, %i3 : i32
      scf.yield %q2 : i32
    }
    scf.yield %acc : i32
  } else {
    %q2 = arith.xori %a, %i7 : i32
    scf.yield %q2 : i32
  }
  %out = arith.addi %w, %steps#1 : i32
  memref.store %out, %Y[%g] : memref<512xi32>
  gpu.return
}
"""

# Every workgroup id and work-item id the ABI hands to a kernel: 6 values per work-item.
IDS = """
gpu.func @ids(%Y: memref<4608xi32>) kernel attributes {known_block_size = array<i32: 8, 4, 2>} {
  %tx = gpu.thread_id x
  %ty = gpu.thread_id y
  %tz = gpu.thread_id z
  %bx = gpu.block_id x
  %by = gpu.block_id y
  %bz = gpu.block_id z
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %l1 = arith.muli %tz, %c4 : index
  %l2 = arith.addi %ty, %l1 : index
  %l3 = arith.muli %l2, %c8 : index
  %lin = arith.addi %tx, %l3 : index
  %b1 = arith.muli %bz, %c2 : index
  %b2 = arith.addi %by, %b1 : index
  %b3 = arith.muli %b2, %c3 : index
  %blin = arith.addi %bx, %b3 : index
  %s1 = arith.muli %blin, %c64 : index
  %s2 = arith.addi %lin, %s1 : index
  %slot = arith.muli %s2, %c6 : index
  %o1 = arith.addi %slot, %c1 : index
  %o2 = arith.addi %slot, %c2 : index
  %o3 = arith.addi %slot, %c3 : index
  %o4 = arith.addi %slot, %c4 : index
  %o5 = arith.addi %slot, %c5 : index
  %vtx = arith.index_cast %tx : index to i32
  %vty = arith.index_cast %ty : index to i32
  %vtz = arith.index_cast %tz : index to i32
  %vbx = arith.index_cast %bx : index to i32
  %vby = arith.index_cast %by : index to i32
  %vbz = arith.index_cast %bz : index to i32
  memref.store %vtx, %Y[%slot] : memref<4608xi32>
  memref.store %vty, %Y[%o1] : memref<4608xi32>
  memref.store %vtz, %Y[%o2] : memref<4608xi32>
  memref.store %vbx, %Y[%o3] : memref<4608xi32>
  memref.store %vby, %Y[%o4] : memref<4608xi32>
  memref.store %vbz, %Y[%o5] : memref<4608xi32>
  gpu.return
}
"""

# Out-of-bounds kernels for the fault tests: 64 work-items index 16-element buffers.
OOB_GLOBAL = """
gpu.func @oob_global(%Y: memref<16xf32>) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
  %t = gpu.thread_id x
  %one = arith.constant 1.0 : f32
  memref.store %one, %Y[%t] : memref<16xf32>
  gpu.return
}
"""
OOB_LDS = """
gpu.func @oob_lds(%Y: memref<64xf32>) workgroup(%s: memref<16xf32, #gpu.address_space<workgroup>>)
    kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
  %t = gpu.thread_id x
  %one = arith.constant 1.0 : f32
  memref.store %one, %s[%t] : memref<16xf32, #gpu.address_space<workgroup>>
  gpu.barrier
  %v = memref.load %s[%t] : memref<16xf32, #gpu.address_space<workgroup>>
  memref.store %v, %Y[%t] : memref<64xf32>
  gpu.return
}
"""
