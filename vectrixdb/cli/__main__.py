"""`python -m vectrixdb.cli ...` runs the `vectrixdb` command."""
from vectrixdb.cli.commands import main

main()
