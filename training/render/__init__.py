"""Physically based training scenes of Ô ăn quan boards rendered with Blender (bpy).

Only `training.render.blender` imports bpy; everything else (sampling, geometry, line
masks, ground truth, manifests) is plain numpy so tests run without Blender.
Run with the render venv: `python -m training.render --dataset train-v1 --size 640x480`.
"""
