"""python -m reportgen: the ragreport command."""

from .cli import run

run()
