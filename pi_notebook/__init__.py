"""pi_notebook: the Pi agent runtime in Python, living inside Jupyter."""

__version__ = "0.1.0"
