"""Running turns inside a Jupyter kernel."""
