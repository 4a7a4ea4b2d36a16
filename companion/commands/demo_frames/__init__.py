"""Bundled demo frames (made by ``python -m companion.commands.demo --make``)."""
