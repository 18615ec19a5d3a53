"""python -m reportgen: the ragreport command."""

from .command import run

run()
