"""The `wmma-gen` command line."""
