"""The playground for any OpenEnv server: connect by URL, a form from its action schema, play over /ws.

target.py checks and reads the server (/health, /metadata, /schema), wsclient.py is one visitor's
session over openenv's /ws protocol, schema_form.py turns a JSON schema into form fields and back,
render.py shows any observation, episode.py is the record, runs.py stores it, collect_export.py
writes what ``openenv collect`` writes, tab.py is the Gradio tab.
"""
