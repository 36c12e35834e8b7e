"""The notebook side of mead_notebook: the widget that shows a turn and asks the person."""
