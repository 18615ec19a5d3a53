"""python -m reportgen: the ragreport command."""

from .cli import main

main(prog_name="ragreport")
