"""Game sequences from the Blender scene generator: plan (pure), frames (pure), the CLI."""
