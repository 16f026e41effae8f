"""MLA decode (DeepSeek-V2/V3, Kimi K2) on a paged latent cache: docs/mla.md."""
