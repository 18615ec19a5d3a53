"""The HTML page: view models, charts and the Jinja rendering of ``templates/``."""
