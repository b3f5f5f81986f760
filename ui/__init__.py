"""The Gradio playground mounted at /web."""
