"""Command-line front ends: check, apply (--diff, -i), rule, lsp."""
