"""Constants shared by the sweep tests: one small, fast problem on one arch."""
ARCH = "gfx1100"
SHAPE = (256, 256, 256)
