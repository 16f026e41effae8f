"""A dummy op registered the way every op is (one folder, one `registry.register` line) to prove
the op contract: y = 2 * x + 1 over f16 vectors, one small LLVM-compiled kernel."""
