"""Reference scheduler module files, shipped as package data.

Each subfolder (``fifo``, ``easy``, ``conservative``) holds a Flux Python
broker module that is loaded by path (``flux module load PATH.py``), never
imported by name.  This package exists only so that the installed files can
be found with :func:`importlib.resources.files`.
"""
