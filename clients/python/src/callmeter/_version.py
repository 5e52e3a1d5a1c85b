"""The package's version: read by pyproject.toml (setuptools' dynamic version) and sent in the user-agent."""

__version__ = "0.1.0"
