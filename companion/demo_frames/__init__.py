"""Bundled demo frames (made by ``python -m companion.demo --make``)."""
