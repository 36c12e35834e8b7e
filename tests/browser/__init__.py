"""End-to-end tests in real JupyterLab and Notebook 7, driven in Chromium."""
