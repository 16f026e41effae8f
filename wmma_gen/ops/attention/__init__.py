"""Flash attention (forward and backward): directive.py (what is compiled), reference.py
(the float64 numpy spec), inputs.py (validation of what a user passes)."""
