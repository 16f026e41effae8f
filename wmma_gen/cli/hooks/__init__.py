"""CLI hooks of the ops that keep their own flags and report lines (OpSpec.cli_from names the
module): attention, attention_bwd. They live under cli/ so the arrow runs cli -> ops only."""
