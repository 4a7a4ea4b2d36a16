"""Build, simulate and render one scene in Blender (bpy). The only module that imports bpy.

`render_scene(spec, out_png)` resets Blender, builds the ground (procedural Cycles shader
with the line mask mixed in), drops the pieces with Bullet rigid bodies, adds the hand and
shadow casters, renders with Cycles on one CPU thread and ray-casts visibility. It returns
the measurements the ground-truth writer needs; everything random comes from the spec.
"""

from __future__ import annotations

import math
import random
import time
from typing import Any

import bpy  # type: ignore[import-not-found]  # isort: skip  (bmesh needs bpy loaded first)
import bmesh  # type: ignore[import-not-found]  # isort: skip
import numpy as np
from mathutils import Matrix, Vector  # type: ignore[import-not-found]
from mathutils.bvhtree import BVHTree  # type: ignore[import-not-found]

from training.render.geometry import REGIONS, Camera, sample_polygon
from training.render.lines import draw_lines
from training.render.sample import PieceSpec, SceneSpec, camera_from

PHYSICS_FRAMES = 60
SAMPLES = 4


# -- node helpers -------------------------------------------------------------------------


class Nodes:
    """Small wrapper to wire shader nodes without index bookkeeping at every call."""

    def __init__(self, tree: Any) -> None:
        self.t = tree

    def new(self, kind: str, **props: Any) -> Any:
        n = self.t.nodes.new(kind)
        for k, v in props.items():
            setattr(n, k, v)
        return n

    def link(self, a: Any, b: Any) -> None:
        self.t.links.new(a, b)

    def val(self, v: float) -> Any:
        n = self.new("ShaderNodeValue")
        n.outputs[0].default_value = v
        return n.outputs[0]

    def rgb(self, c: Any) -> Any:
        n = self.new("ShaderNodeRGB")
        n.outputs[0].default_value = (*lin(c), 1.0)
        return n.outputs[0]

    def mix(self, fac: Any, a: Any, b: Any, blend: str = "MIX") -> Any:
        n = self.new("ShaderNodeMixRGB", blend_type=blend)
        self._in(n.inputs["Fac"], fac)
        self._in(n.inputs["Color1"], a)
        self._in(n.inputs["Color2"], b)
        return n.outputs[0]

    def math(self, op: str, a: Any, b: Any = 0.0, clamp: bool = False) -> Any:
        n = self.new("ShaderNodeMath", operation=op, use_clamp=clamp)
        self._in(n.inputs[0], a)
        self._in(n.inputs[1], b)
        return n.outputs[0]

    def _in(self, sock: Any, v: Any) -> None:
        if isinstance(v, (int, float)):
            sock.default_value = v
        elif isinstance(v, tuple):
            sock.default_value = (*lin(v), 1.0) if len(sock.default_value) == 4 else v
        else:
            self.link(v, sock)

    def noise(self, vec: Any, scale: float, detail: float = 4, rough: float = 0.5) -> Any:
        n = self.new("ShaderNodeTexNoise")
        n.inputs["Scale"].default_value = scale
        n.inputs["Detail"].default_value = detail
        n.inputs["Roughness"].default_value = rough
        self.link(vec, n.inputs["Vector"])
        return n

    def voronoi(self, vec: Any, scale: float, feature: str = "F1") -> Any:
        n = self.new("ShaderNodeTexVoronoi", feature=feature)
        n.inputs["Scale"].default_value = scale
        self.link(vec, n.inputs["Vector"])
        return n

    def ramp(self, fac: Any, stops: list[tuple[float, Any]]) -> Any:
        n = self.new("ShaderNodeValToRGB")
        el = n.color_ramp.elements
        el[0].position, el[0].color = stops[0][0], (*lin(stops[0][1]), 1)
        el[1].position, el[1].color = stops[-1][0], (*lin(stops[-1][1]), 1)
        for pos, c in stops[1:-1]:
            e = el.new(pos)
            e.color = (*lin(c), 1)
        self.link(fac, n.inputs["Fac"])
        return n.outputs[0]


def lin(c: Any) -> tuple[float, float, float]:
    """Display (sRGB-like) colour as drawn in the spec -> Blender's linear scene colour."""
    r, g, b = (max(0.0, float(v)) ** 2.2 for v in c[:3])
    return r, g, b


def _shade(c: Any, k: float) -> tuple[float, float, float]:
    r, g, b = (min(1.0, max(0.0, float(v) * k)) for v in c[:3])
    return r, g, b


# -- ground -------------------------------------------------------------------------------


def _ground_shader(nd: Nodes, vec: Any, p: dict[str, Any]) -> tuple[Any, Any, Any]:
    """(colour, roughness, height) sockets of a procedural ground family."""
    fam, base = p["family"], p["base"]
    off = nd.new("ShaderNodeVectorMath", operation="ADD")
    nd.link(vec, off.inputs[0])
    off.inputs[1].default_value = (p["seed"] * 0.37, p["seed"] * 0.11, 0.0)
    v = off.outputs[0]
    fine = nd.noise(v, 180, 8, 0.6)
    mottle = nd.noise(v, 3, 5, 0.55)
    rough: Any = p["roughness"]
    if fam == "asphalt":
        vor = nd.voronoi(v, 1000 / p["grain_mm"] / 2.0)
        agg = nd.math("GREATER_THAN", vor.outputs["Distance"], 0.25)
        col = nd.mix(nd.math("MULTIPLY", agg, 0.6), base, tuple(p["aggregate"]))
        col = nd.mix(
            nd.math("MULTIPLY", mottle.outputs["Fac"], p["wear"] * 0.5), col, _shade(base, 1.6)
        )
        height = nd.math("ADD", nd.math("MULTIPLY", agg, 0.6), fine.outputs["Fac"])
    elif fam in ("concrete", "earth", "sand"):
        lo, hi = _shade(base, 0.75), _shade(base, 1.25)
        col = nd.ramp(mottle.outputs["Fac"], [(0.3, lo), (0.7, hi)])
        col = nd.mix(nd.math("MULTIPLY", fine.outputs["Fac"], 0.35), col, _shade(base, 0.6))
        height = fine.outputs["Fac"]
        if fam == "earth":
            vor = nd.voronoi(v, 60)
            st = nd.math("LESS_THAN", vor.outputs["Distance"], 0.12 * p["stones"] + 0.01)
            col = nd.mix(nd.math("MULTIPLY", st, 0.7), col, _shade(base, 1.5))
            height = nd.math("ADD", height, nd.math("MULTIPLY", st, 0.8))
        if fam == "sand":
            wave = nd.new("ShaderNodeTexWave")
            wave.inputs["Scale"].default_value = 4
            wave.inputs["Distortion"].default_value = 6
            nd.link(v, wave.inputs["Vector"])
            height = nd.math("ADD", height, nd.math("MULTIPLY", wave.outputs["Fac"], p["ripples"]))
        if fam == "concrete" and p.get("cracks"):
            vor = nd.voronoi(v, 1.5, "DISTANCE_TO_EDGE")
            crack = nd.math("LESS_THAN", vor.outputs["Distance"], 0.006)
            col = nd.mix(nd.math("MULTIPLY", crack, 0.8), col, _shade(base, 0.3))
            height = nd.math("SUBTRACT", height, crack)
    elif fam == "gravel":
        vor = nd.voronoi(v, 1000 / p["stone_mm"])
        cell = vor.outputs["Color"]
        bw = nd.new("ShaderNodeRGBToBW")
        nd.link(cell, bw.inputs[0])
        col = nd.ramp(
            bw.outputs[0],
            [
                (0.0, _shade(base, 1 - p["contrast"] * 0.6)),
                (1.0, _shade(base, 1 + p["contrast"] * 0.5)),
            ],
        )
        edge = nd.voronoi(v, 1000 / p["stone_mm"], "DISTANCE_TO_EDGE")
        height = nd.math("POWER", edge.outputs["Distance"], 0.5)
        col = nd.mix(nd.math("LESS_THAN", edge.outputs["Distance"], 0.06), col, _shade(base, 0.25))
    elif fam in ("slabs", "brick", "tiles", "wood", "lino"):
        br = nd.new("ShaderNodeTexBrick", offset=p["offset"], offset_frequency=2)
        tw, th = p["tile_m"]
        br.inputs["Scale"].default_value = 1.0
        br.inputs["Brick Width"].default_value = tw
        br.inputs["Row Height"].default_value = th
        br.inputs["Mortar Size"].default_value = p["grout_mm"] / 1000
        br.inputs["Mortar Smooth"].default_value = 0.1
        br.inputs["Bias"].default_value = 0
        a = tuple(p["base"])
        b = tuple(p.get("second", _shade(a, 1 - p["variation"])))
        if fam in ("tiles", "lino") and not p.get("checker"):
            b = _shade(a, 1 - p["variation"])
        br.inputs["Color1"].default_value = (*lin(a), 1)
        br.inputs["Color2"].default_value = (*lin(b), 1)
        br.inputs["Mortar"].default_value = (*lin(p["grout"]), 1)
        nd.link(v, br.inputs["Vector"])
        col = br.outputs["Color"]
        mortar = br.outputs["Fac"]
        if fam == "wood":
            wave = nd.new("ShaderNodeTexWave", wave_type="BANDS", bands_direction="X")
            wave.inputs["Scale"].default_value = 6
            wave.inputs["Distortion"].default_value = 8
            wave.inputs["Detail Scale"].default_value = 2
            nd.link(v, wave.inputs["Vector"])
            col = nd.mix(
                nd.math("MULTIPLY", wave.outputs["Fac"], p["grain"] * 0.5), col, _shade(a, 0.5)
            )
        if fam == "lino":
            col = nd.mix(
                nd.math(
                    "MULTIPLY", nd.math("GREATER_THAN", fine.outputs["Fac"], 0.62), p["speckle"]
                ),
                col,
                tuple(p["second"]),
            )
        col = nd.mix(nd.math("MULTIPLY", mottle.outputs["Fac"], 0.25), col, _shade(a, 0.8))
        height = nd.math(
            "ADD", nd.math("MULTIPLY", mortar, -1.0), nd.math("MULTIPLY", fine.outputs["Fac"], 0.3)
        )
        if p.get("glossy"):
            rough = nd.math("ADD", nd.math("MULTIPLY", mortar, 0.6), 0.3)
    elif fam == "woven_mat":
        s = 1000 / p["weave_mm"]
        wx = nd.new("ShaderNodeTexWave", wave_type="BANDS", bands_direction="X")
        wy = nd.new("ShaderNodeTexWave", wave_type="BANDS", bands_direction="Y")
        for w in (wx, wy):
            w.inputs["Scale"].default_value = s
            nd.link(v, w.inputs["Vector"])
        chk = nd.new("ShaderNodeTexChecker")
        chk.inputs["Scale"].default_value = s * 2
        nd.link(v, chk.inputs["Vector"])
        sel = nd.math("GREATER_THAN", chk.outputs["Fac"], 0.5)
        weave = nd.mix(sel, wx.outputs["Fac"], wy.outputs["Fac"])
        bw = nd.new("ShaderNodeRGBToBW")
        nd.link(weave, bw.inputs[0])
        col = nd.ramp(bw.outputs[0], [(0.0, _shade(base, 0.6)), (1.0, _shade(base, 1.15))])
        stripes = nd.new("ShaderNodeTexWave", wave_type="BANDS", bands_direction="Y")
        stripes.inputs["Scale"].default_value = 2
        nd.link(v, stripes.inputs["Vector"])
        col = nd.mix(
            nd.math("MULTIPLY", nd.math("GREATER_THAN", stripes.outputs["Fac"], 0.8), 0.7),
            col,
            tuple(p["second"]),
        )
        height = bw.outputs[0]
    elif fam == "printed_mat":
        s = 1 / p["pattern_m"]
        pat = p["pattern"]
        if pat == "check":
            t = nd.new("ShaderNodeTexChecker")
            t.inputs["Scale"].default_value = s
            nd.link(v, t.inputs["Vector"])
            fac = t.outputs["Fac"]
        elif pat in ("stripes", "waves"):
            t = nd.new("ShaderNodeTexWave", wave_type="BANDS")
            t.inputs["Scale"].default_value = s
            t.inputs["Distortion"].default_value = 0 if pat == "stripes" else 4
            nd.link(v, t.inputs["Vector"])
            fac = nd.math("GREATER_THAN", t.outputs["Fac"], 0.5)
        elif pat == "dots":
            t = nd.voronoi(v, s)
            fac = nd.math("LESS_THAN", t.outputs["Distance"], 0.3)
        else:
            t = nd.noise(v, s, 2, 0.5)
            fac = nd.math("GREATER_THAN", t.outputs["Fac"], 0.5)
        col = nd.mix(fac, tuple(base), tuple(p["second"]))
        weave = nd.new("ShaderNodeTexChecker")
        weave.inputs["Scale"].default_value = 700
        nd.link(v, weave.inputs["Vector"])
        col = nd.mix(nd.math("MULTIPLY", weave.outputs["Fac"], 0.12), col, _shade(base, 0.6))
        height = weave.outputs["Fac"]
    else:  # paper / card on a floor
        sw, sh = p["sheet_m"]
        ax = nd.new("ShaderNodeSeparateXYZ")
        nd.link(vec, ax.inputs[0])
        inx = nd.math("LESS_THAN", nd.math("ABSOLUTE", ax.outputs[0]), sw / 2)
        iny = nd.math("LESS_THAN", nd.math("ABSOLUTE", ax.outputs[1]), sh / 2)
        on = nd.math("MULTIPLY", inx, iny)
        paper = nd.mix(
            nd.math("MULTIPLY", fine.outputs["Fac"], 0.15), tuple(base), _shade(base, 0.8)
        )
        floor = nd.mix(
            nd.math("MULTIPLY", mottle.outputs["Fac"], 0.5),
            tuple(p["floor"]),
            _shade(p["floor"], 0.6),
        )
        col = nd.mix(on, floor, paper)
        crease = nd.voronoi(v, 1.2, "DISTANCE_TO_EDGE")
        height = nd.math(
            "ADD",
            nd.math("MULTIPLY", on, 0.5),
            nd.math(
                "MULTIPLY", nd.math("LESS_THAN", crease.outputs["Distance"], 0.01), -p["crease"]
            ),
        )
    return col, rough, height


def _build_ground(spec: SceneSpec) -> None:
    c = spec.conditions
    mesh = bpy.data.meshes.new("ground")
    s = 40.0
    mesh.from_pydata([(-s, -s, 0), (s, -s, 0), (s, s, 0), (-s, s, 0)], [], [(0, 1, 2, 3)])
    obj = bpy.data.objects.new("ground", mesh)
    bpy.context.scene.collection.objects.link(obj)
    mat = bpy.data.materials.new("ground")
    mat.use_nodes = True
    nt = mat.node_tree
    nt.nodes.clear()
    nd = Nodes(nt)
    tc = nd.new("ShaderNodeTexCoord")
    vec = tc.outputs["Object"]
    col, rough, height = _ground_shader(nd, vec, c["ground_params"])
    lm = draw_lines(spec.board, c["lines"], min(spec.board.square_m))
    h, w = lm.mask.shape
    img = bpy.data.images.new("lines", w, h, alpha=False, float_buffer=True, is_data=True)
    rgba = np.ones((h, w, 4), dtype=np.float32)
    flipped = lm.mask[::-1]
    rgba[..., 0] = rgba[..., 1] = rgba[..., 2] = flipped
    img.pixels.foreach_set(rgba.ravel())
    img.pack()
    mp = nd.new("ShaderNodeMapping")
    mp.inputs["Location"].default_value = (-lm.x0 / (lm.x1 - lm.x0), -lm.y0 / (lm.y1 - lm.y0), 0)
    mp.inputs["Scale"].default_value = (1 / (lm.x1 - lm.x0), 1 / (lm.y1 - lm.y0), 1)
    # Mapping applies scale before location: (v * S) + L
    nd.link(vec, mp.inputs["Vector"])
    tex = nd.new("ShaderNodeTexImage", image=img, extension="CLIP", interpolation="Linear")
    nd.link(mp.outputs[0], tex.inputs["Vector"])
    mask = tex.outputs["Color"]
    bwm = nd.new("ShaderNodeRGBToBW")
    nd.link(mask, bwm.inputs[0])
    m = bwm.outputs[0]
    lp = c["lines"]
    if lp["kind"] == "scratched":
        lcol = nd.mix(0.7, col, (0.0, 0.0, 0.0), "MULTIPLY")
        col = nd.mix(m, col, _shade((0.5, 0.5, 0.5), 1.0), "MULTIPLY")
        col = nd.mix(m, col, lcol)
        height = nd.math("SUBTRACT", height, nd.math("MULTIPLY", m, 3.0))
    else:
        col = nd.mix(m, col, tuple(lp["rgb"]))
        lrough = {"chalk": 0.95, "charcoal": 0.9, "marker": 0.55, "paint": 0.45, "tape": 0.35}
        rough = nd.math(
            "ADD",
            nd.math("MULTIPLY", rough, nd.math("SUBTRACT", 1.0, m)),
            nd.math("MULTIPLY", m, lrough[lp["kind"]]),
        )
        height = nd.math("ADD", height, nd.math("MULTIPLY", m, 0.4))
    bsdf = nd.new("ShaderNodeBsdfPrincipled")
    nd.link(col, bsdf.inputs["Base Color"])
    nd._in(bsdf.inputs["Roughness"], rough)
    bump = nd.new("ShaderNodeBump")
    bump.inputs["Strength"].default_value = 0.25 * c["ground_params"]["bump"]
    bump.inputs["Distance"].default_value = 0.002
    nd.link(height, bump.inputs["Height"])
    nd.link(bump.outputs[0], bsdf.inputs["Normal"])
    out = nd.new("ShaderNodeOutputMaterial")
    nd.link(bsdf.outputs[0], out.inputs["Surface"])
    obj.data.materials.append(mat)


# -- pieces -------------------------------------------------------------------------------


def _piece_mesh(p: PieceSpec, family_look: dict[str, Any]) -> Any:
    rng = np.random.default_rng(p.shape_seed)
    bm = bmesh.new()
    fam = p.family
    if fam == "buttons":
        bmesh.ops.create_cone(bm, cap_ends=True, segments=20, radius1=0.5, radius2=0.5, depth=1.0)
    else:
        bmesh.ops.create_icosphere(bm, subdivisions=2, radius=0.5)
    v = np.array([x.co[:] for x in bm.verts])
    if fam in ("pebbles", "big_stone"):
        irr = family_look.get("irregularity", 0.1) if fam == "pebbles" else 0.12
        d = np.zeros(len(v))
        for _ in range(5):
            k = rng.normal(size=3) * rng.uniform(1.5, 4)
            d += np.sin(v @ k + rng.uniform(0, 6.3)) * rng.uniform(0.3, 1)
        v *= (1 + irr * d / 3)[:, None]
    elif fam == "shells":
        ang = np.arctan2(v[:, 1], v[:, 0])
        ribs = family_look.get("ribs", 12)
        v[:, :2] *= (1 + 0.04 * np.cos(ribs * ang))[:, None]
        v[:, 2] = np.where(v[:, 2] < 0, v[:, 2] * 0.15, v[:, 2])
    elif fam == "beans":
        v[:, 1] += 0.12 * np.cos(v[:, 0] * 3)
    sc = np.array(p.scale)
    v *= sc
    v *= p.size_m / max(float(np.ptp(v, axis=0).max()), 1e-9)
    for vert, co in zip(bm.verts, v, strict=True):
        vert.co = co
    mesh = bpy.data.meshes.new(f"piece{p.id}")
    bm.to_mesh(mesh)
    bm.free()
    for poly in mesh.polygons:
        poly.use_smooth = fam != "buttons"
    return mesh


def _piece_material(name: str, fam: str, look: dict[str, Any]) -> Any:
    mat = bpy.data.materials.new(name)
    mat.use_nodes = True
    nt = mat.node_tree
    nt.nodes.clear()
    nd = Nodes(nt)
    info = nd.new("ShaderNodeObjectInfo")
    tc = nd.new("ShaderNodeTexCoord")
    bsdf = nd.new("ShaderNodeBsdfPrincipled")
    col = info.outputs["Color"]
    if fam in ("pebbles", "big_stone", "shells", "beans"):
        n = nd.noise(tc.outputs["Object"], 120 if fam != "beans" else 60, 6, 0.6)
        speck = nd.math("GREATER_THAN", n.outputs["Fac"], 0.62)
        col = nd.mix(
            nd.math("MULTIPLY", speck, 0.5),
            col,
            (0.9, 0.9, 0.88) if fam != "beans" else (0.1, 0.05, 0.03),
        )
        mot = nd.noise(tc.outputs["Object"], 40, 3, 0.5)
        col = nd.mix(nd.math("MULTIPLY", mot.outputs["Fac"], 0.4), col, (0.2, 0.2, 0.2), "MULTIPLY")
        bump = nd.new("ShaderNodeBump")
        bump.inputs["Strength"].default_value = 0.15
        nd.link(n.outputs["Fac"], bump.inputs["Height"])
        nd.link(bump.outputs[0], bsdf.inputs["Normal"])
    if fam == "marbles":  # tinted glass that still reads against any ground
        bsdf.inputs["Transmission Weight"].default_value = look.get("transmission", 0.7)
        bsdf.inputs["Coat Weight"].default_value = 0.5
        bsdf.inputs["IOR"].default_value = 1.5
    if fam == "buttons":
        ax = nd.new("ShaderNodeSeparateXYZ")
        nd.link(tc.outputs["Object"], ax.inputs[0])
        holes = nd.voronoi(tc.outputs["Object"], 180)
        hole = nd.math("LESS_THAN", holes.outputs["Distance"], 0.15)
        col = nd.mix(nd.math("MULTIPLY", hole, 0.8), col, (0.02, 0.02, 0.02))
    nd.link(col, bsdf.inputs["Base Color"])
    bsdf.inputs["Roughness"].default_value = look.get("roughness", 0.6)
    out = nd.new("ShaderNodeOutputMaterial")
    nd.link(bsdf.outputs[0], out.inputs["Surface"])
    return mat


def _build_pieces(spec: SceneSpec) -> list[Any]:
    looks = spec.conditions["pieces"]["looks"]
    mats: dict[str, Any] = {}
    objs = []
    for p in spec.pieces:
        look = looks.get(p.family, {})
        if p.family not in mats:
            mats[p.family] = _piece_material(
                p.family, p.family, look if look else {"roughness": 0.6}
            )
        obj = bpy.data.objects.new(f"piece{p.id}", _piece_mesh(p, look))
        obj.data.materials.append(mats[p.family])
        obj.color = (*lin(p.colour), 1.0)
        obj.location = p.drop
        obj.rotation_euler = p.rotation
        bpy.context.scene.collection.objects.link(obj)
        objs.append(obj)
    return objs


def _simulate(
    objs: list[Any], spec: SceneSpec, resting: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """Drop the pieces with Bullet; return the physics settings used.

    Pieces named in `resting` stay where they are (passive colliders the others land on).
    """
    scene = bpy.context.scene
    rollers = {f"piece{p.id}" for p in spec.pieces if p.family == "marbles"}
    t0 = time.perf_counter()
    col = bpy.data.meshes.new("collider")
    bm = bmesh.new()
    bmesh.ops.create_cube(bm, size=1.0)
    bm.to_mesh(col)
    bm.free()
    floor = bpy.data.objects.new("collider", col)
    floor.scale = (20, 20, 0.2)
    floor.location = (0, 0, -0.1)
    floor.hide_render = True
    scene.collection.objects.link(floor)
    with bpy.context.temp_override(scene=scene):
        bpy.ops.rigidbody.world_add()
    rbw = scene.rigidbody_world
    rbw.substeps_per_frame = 10
    rbw.solver_iterations = 10
    rbw.point_cache.frame_start = 1
    rbw.point_cache.frame_end = PHYSICS_FRAMES
    vl = bpy.context.view_layer
    for o in [floor, *objs]:
        vl.objects.active = o
        with bpy.context.temp_override(object=o, active_object=o, selected_objects=[o]):
            passive = o is floor or o.name in resting
            bpy.ops.rigidbody.object_add(type="PASSIVE" if passive else "ACTIVE")
        rb = o.rigid_body
        rb.collision_shape = "BOX" if o is floor else "CONVEX_HULL"
        rb.use_margin = True
        rb.collision_margin = 0.0004
        rb.friction = 0.8
        rb.restitution = 0.05
        if o is not floor:
            size = max(o.dimensions)
            rb.mass = 2600 * (size**3) * 0.3
            rb.linear_damping = 0.3
            # Bullet has no rolling resistance: marbles would roll off the board for good
            rb.angular_damping = 0.9 if o.name in rollers else 0.6
    for f in range(1, PHYSICS_FRAMES + 1):
        scene.frame_set(f)
    final = [o.matrix_world.copy() for o in objs]
    rbw.enabled = False
    scene.frame_set(1)
    for o in objs:
        o.rigid_body.enabled = False
    with bpy.context.temp_override(scene=scene):
        bpy.ops.rigidbody.world_remove()
    for o, m in zip(objs, final, strict=True):
        o.matrix_world = m
    bpy.data.objects.remove(floor)
    return {
        "engine": "Bullet (Blender rigid body)",
        "frames": PHYSICS_FRAMES,
        "substeps_per_frame": 10,
        "seconds": round(time.perf_counter() - t0, 2),
    }


# -- hand, shadows, light, camera ---------------------------------------------------------


def _ellipsoid(name: str, center: Any, radii: Any, rot: Any, mat: Any) -> Any:
    bm = bmesh.new()
    bmesh.ops.create_uvsphere(bm, u_segments=16, v_segments=10, radius=1.0)
    mesh = bpy.data.meshes.new(name)
    bm.to_mesh(mesh)
    bm.free()
    for poly in mesh.polygons:
        poly.use_smooth = True
    o = bpy.data.objects.new(name, mesh)
    o.location = center
    o.scale = radii
    o.rotation_euler = rot
    o.data.materials.append(mat)
    bpy.context.scene.collection.objects.link(o)
    return o


def _capsule(name: str, a: Any, b: Any, r: float, mat: Any) -> Any:
    a, b = Vector(a), Vector(b)
    d = b - a
    rot = d.to_track_quat("Z", "Y").to_euler()
    return _ellipsoid(name, (a + b) / 2, (r, r, d.length / 2 + r), rot, mat)


def _build_hand(spec: SceneSpec, cam: Camera) -> list[Any]:
    h = spec.conditions["occluders"]["hand"]
    if not h["present"]:
        return []
    rng = random.Random(spec.seed * 7 + 1)
    poly = np.array(spec.board.regions[h["over_region"]])
    c = poly.mean(axis=0)
    side = {"south": (0, -1), "north": (0, 1), "east": (1, 0), "west": (-1, 0)}[h["from_side"]]
    out = np.array(side, dtype=float)
    out = out + np.array([rng.uniform(-0.4, 0.4), rng.uniform(-0.4, 0.4)])
    out /= np.linalg.norm(out)
    s = h["scale"]
    z = h["height_m"]
    skin = bpy.data.materials.new("skin")
    skin.use_nodes = True
    b = skin.node_tree.nodes["Principled BSDF"]
    b.inputs["Base Color"].default_value = (*lin(h["skin_rgb"]), 1)
    b.inputs["Subsurface Weight"].default_value = 0.3
    b.inputs["Subsurface Radius"].default_value = (0.01, 0.004, 0.002)
    b.inputs["Roughness"].default_value = 0.55
    palm = c + out * h["reach"] * 0.3
    # slide the palm along the camera's ray through the square so it hovers over it in the
    # picture, not just in plan (a hand 20 cm up would otherwise appear beside the square)
    eye = cam.position
    palm = palm + (eye[:2] - palm) * (h["height_m"] / eye[2])
    wrist = palm + out * 0.09 * s
    objs = []
    yaw = math.atan2(-out[1], -out[0])
    objs.append(
        _ellipsoid("palm", (*palm, z), (0.055 * s, 0.045 * s, 0.017 * s), (0, 0, yaw), skin)
    )
    fwd = -out
    perp = np.array([-fwd[1], fwd[0]])
    for i in range(4):
        base = palm + fwd * 0.045 * s + perp * (i - 1.5) * 0.02 * s
        spread = (i - 1.5) * 0.15 * h["spread"]
        dirn = fwd * math.cos(spread) + perp * math.sin(spread)
        tip = base + dirn * (0.07 + 0.01 * (i in (1, 2))) * s
        objs.append(
            _capsule(f"finger{i}", (*base, z), (*tip, z - rng.uniform(0, 0.03)), 0.009 * s, skin)
        )
    tb = palm + perp * 0.04 * s
    objs.append(
        _capsule(
            "thumb",
            (*tb, z - 0.005),
            (*(tb + (perp * 0.6 + fwd * 0.5) * 0.06 * s), z - 0.01),
            0.011 * s,
            skin,
        )
    )
    elbow = wrist + out * 0.35
    rise = rng.uniform(0.1, 0.35)
    objs.append(
        _capsule("forearm", (*wrist, z + 0.01), (*elbow, z + 0.35 * rise + 0.05), 0.035 * s, skin)
    )
    upper = elbow + out * 0.4
    if h["sleeve"]:
        cloth = bpy.data.materials.new("sleeve")
        cloth.use_nodes = True
        cb = cloth.node_tree.nodes["Principled BSDF"]
        cb.inputs["Base Color"].default_value = (*lin(h["sleeve_rgb"]), 1)
        cb.inputs["Roughness"].default_value = 0.9
        start = wrist + out * rng.uniform(0.08, 0.3)
        objs.append(
            _capsule("sleeve", (*start, z + 0.02 + 0.1 * rise), (*upper, z + 0.5), 0.045 * s, cloth)
        )
    else:
        objs.append(
            _capsule(
                "upperarm", (*elbow, z + 0.35 * rise + 0.05), (*upper, z + 0.5), 0.04 * s, skin
            )
        )
    return objs


def _build_shadow_casters(spec: SceneSpec) -> list[dict[str, Any]]:
    c = spec.conditions
    light = c["light"]
    out = []
    mat = bpy.data.materials.new("caster")
    for i, sh in enumerate(c["occluders"]["shadows"]):
        rng = random.Random(sh["seed"])
        if light["type"] == "sun":
            az = math.radians(light["sun_azimuth_deg"])
            el = math.radians(light["sun_elevation_deg"])
        else:
            lp = light["lamps"][0]["position_m"]
            az = math.atan2(lp[1], lp[0])
            el = math.atan2(lp[2], math.hypot(lp[0], lp[1]))
        toward = np.array([math.cos(az), math.sin(az)])
        objs = []
        if sh["type"] == "person":
            hgt = rng.uniform(1.5, 1.85)
            reach = hgt / max(math.tan(el), 0.2)
            d = min(sh["distance_m"], 0.8 * reach) + 0.3
            base = toward * d + np.array([rng.gauss(0, 0.3), rng.gauss(0, 0.3)])
            objs.append(_capsule(f"body{i}", (*base, 0.45), (*base, hgt - 0.3), 0.18, mat))
            objs.append(
                _ellipsoid(f"head{i}", (*base, hgt - 0.1), (0.1, 0.11, 0.12), (0, 0, 0), mat)
            )
        else:
            hgt = rng.uniform(1.2, 2.5)
            base = toward * hgt / max(math.tan(el), 0.3)
            for k in range(rng.randint(15, 40)):
                p = base + np.array([rng.gauss(0, 0.35), rng.gauss(0, 0.35)])
                objs.append(
                    _ellipsoid(
                        f"leaf{i}_{k}",
                        (*p, hgt + rng.gauss(0, 0.1)),
                        (rng.uniform(0.03, 0.09), rng.uniform(0.015, 0.04), 0.003),
                        (0, 0, rng.uniform(0, 6.3)),
                        mat,
                    )
                )
            objs.append(
                _capsule(
                    f"branch{i}",
                    (*(base - toward * 0.8), hgt + 0.05),
                    (*(base + toward * 0.5), hgt),
                    0.02,
                    mat,
                )
            )
        for o in objs:
            o.visible_camera = False
            o.visible_glossy = False
        out.append({"type": sh["type"], "objects": len(objs)})
    return out


def _build_light(spec: SceneSpec) -> None:
    p = spec.conditions["light"]
    world = bpy.data.worlds.new("world")
    bpy.context.scene.world = world
    world.use_nodes = True
    bg = world.node_tree.nodes["Background"]
    if p["type"] == "sun":
        bg.inputs["Color"].default_value = (*p["sky_rgb"], 1)
        bg.inputs["Strength"].default_value = p["sky_strength"]
        sun = bpy.data.lights.new("sun", "SUN")
        sun.energy = p["sun_strength"]
        sun.color = p["sun_rgb"]
        sun.angle = math.radians(p["sun_angle_deg"])
        o = bpy.data.objects.new("sun", sun)
        el, az = math.radians(p["sun_elevation_deg"]), math.radians(p["sun_azimuth_deg"])
        direction = Vector((math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)))
        o.rotation_euler = direction.to_track_quat("Z", "Y").to_euler()
        bpy.context.scene.collection.objects.link(o)
    elif p["type"] == "overcast":
        bg.inputs["Color"].default_value = (*p["sky_rgb"], 1)
        bg.inputs["Strength"].default_value = p["sky_strength"]
    else:
        bg.inputs["Color"].default_value = (*p["ambient_rgb"], 1)
        bg.inputs["Strength"].default_value = p["ambient"]
        for i, lamp in enumerate(p["lamps"]):
            light = bpy.data.lights.new(f"lamp{i}", "AREA")
            light.energy = lamp["power_w"]
            light.color = lamp["rgb"]
            light.size = lamp["size_m"]
            o = bpy.data.objects.new(f"lamp{i}", light)
            o.location = lamp["position_m"]
            o.rotation_euler = Vector(lamp["position_m"]).to_track_quat("Z", "Y").to_euler()
            bpy.context.scene.collection.objects.link(o)
        if p.get("window_light"):
            sun = bpy.data.lights.new("window", "SUN")
            sun.energy = 1.5
            sun.angle = math.radians(8)
            o = bpy.data.objects.new("window", sun)
            o.rotation_euler = (math.radians(50), 0, math.radians(p["seed"] % 360))
            bpy.context.scene.collection.objects.link(o)


def camera_for(spec: SceneSpec) -> Camera:
    """The spec's camera as a pinhole model (also used to place Blender's camera)."""
    return camera_from(spec.conditions["camera"], spec.width, spec.height)


def _build_camera(spec: SceneSpec, cam: Camera) -> None:
    c = spec.conditions["camera"]
    data = bpy.data.cameras.new("cam")
    data.sensor_fit = "HORIZONTAL"
    data.sensor_width = 36
    data.lens = c["focal_mm_36mm_sensor"]
    data.clip_start = 0.05
    data.dof.use_dof = True
    data.dof.focus_distance = c["distance_m"] * (1 + c["focus_error"])
    data.dof.aperture_fstop = c["fstop"]
    o = bpy.data.objects.new("cam", data)
    R = cam.R
    rot = Matrix([list(R[0]), list(-R[1]), list(-R[2])]).transposed()
    o.matrix_world = Matrix.Translation(Vector(cam.position.tolist())) @ rot.to_4x4()
    bpy.context.scene.collection.objects.link(o)
    bpy.context.scene.camera = o


# -- visibility ---------------------------------------------------------------------------


def _bvh(objs: list[Any]) -> tuple[Any, list[int]]:
    verts: list[Any] = []
    polys: list[list[int]] = []
    owner: list[int] = []
    for k, o in enumerate(objs):
        m = o.matrix_world
        base = len(verts)
        verts.extend(m @ v.co for v in o.data.vertices)
        for p in o.data.polygons:
            polys.append([base + i for i in p.vertices])
            owner.append(k)
    return BVHTree.FromPolygons(verts, polys), owner


def measure_visibility(
    spec: SceneSpec, pieces: list[Any], hand: list[Any], cam: Camera
) -> dict[str, Any]:
    """Per-piece visible fraction and region occlusion by the hand, by ray casts."""
    eye = Vector(cam.position.tolist())
    tree, owner = _bvh(pieces + hand)
    hand_tree = _bvh(hand)[0] if hand else None
    n_pieces = len(pieces)
    vis_frac, visible, top_vis, hidden_by_hand = [], [], [], []
    for k, o in enumerate(pieces):
        m = o.matrix_world
        nm = m.to_3x3().inverted_safe().transposed()
        pts = []
        for v in o.data.vertices:
            w = m @ v.co
            n = (nm @ v.normal).normalized()
            if n.dot(eye - w) > 0:
                pts.append(w)
        top = max((m @ v.co for v in o.data.vertices), key=lambda p: p.z)
        step = max(1, len(pts) // 24)
        pts = pts[::step]
        px = cam.project(np.array([list(p) for p in pts])) if pts else np.zeros((0, 2))
        inf = cam.in_frame(px) if pts else np.zeros(0, bool)
        seen, by_hand = 0, 0
        for p, ok in zip(pts, inf, strict=True):
            if not ok:
                continue
            d = p - eye
            loc, _, idx, _ = tree.ray_cast(eye, d.normalized(), d.length + 0.001)
            if idx is None or owner[idx] == k or (loc - p).length < 0.0015:
                seen += 1
            elif owner[idx] >= n_pieces:
                by_hand += 1
        d = top - eye
        loc, _, idx, _ = tree.ray_cast(eye, d.normalized(), d.length + 0.001)
        tpx = cam.project(np.array([list(top)]))
        top_ok = bool(cam.in_frame(tpx)[0]) and (
            idx is None or owner[idx] == k or (loc - top).length < 0.0015
        )
        total = max(1, len(pts))
        vis_frac.append(round(seen / total, 3))
        visible.append(seen > 0)
        top_vis.append(top_ok)
        hidden_by_hand.append(seen == 0 and by_hand > 0)
    occl: dict[str, float] = {}
    inframe: dict[str, float] = {}
    grng = np.random.default_rng(spec.seed)
    for name in REGIONS:
        g = sample_polygon(spec.board.regions[name], 96, grng)
        pts3 = np.c_[g, np.zeros(len(g))]
        inf = cam.in_frame(cam.project(pts3))
        inframe[name] = round(float(inf.mean()), 3)
        hit = 0
        if hand_tree is not None:
            for p in pts3:
                pv = Vector(p.tolist())
                d = pv - eye
                if hand_tree.ray_cast(eye, d.normalized(), d.length)[0] is not None:
                    hit += 1
        occl[name] = round(hit / len(g), 3)
    return {
        "visible_fraction": vis_frac,
        "visible": visible,
        "top_visible": top_vis,
        "hidden_by_hand": hidden_by_hand,
        "occluded_fraction": occl,
        "in_frame_fraction": inframe,
    }


# -- render -------------------------------------------------------------------------------


def _setup_render(spec: SceneSpec, out_png: str) -> None:
    scene = bpy.context.scene
    r = scene.render
    r.engine = "CYCLES"
    r.resolution_x, r.resolution_y = spec.width, spec.height
    r.resolution_percentage = 100
    r.threads_mode = "FIXED"
    r.threads = 1
    r.filepath = out_png
    r.image_settings.file_format = "PNG"
    r.image_settings.color_depth = "8"
    r.use_motion_blur = False
    cy = scene.cycles
    cy.device = "CPU"
    cy.samples = SAMPLES
    cy.use_adaptive_sampling = False
    cy.use_denoising = True
    cy.denoiser = "OPENIMAGEDENOISE"
    cy.denoising_input_passes = "RGB_ALBEDO_NORMAL"
    cy.max_bounces = 6
    cy.diffuse_bounces = 1
    cy.glossy_bounces = 1
    cy.transmission_bounces = 4
    cy.transparent_max_bounces = 2
    cy.volume_bounces = 0
    cy.caustics_reflective = False
    cy.caustics_refractive = False
    cy.seed = spec.seed % (2**31)
    post = spec.conditions["post"]
    vs = scene.view_settings
    vs.view_transform = "AgX"
    try:
        vs.look = "None" if post["look"] == "None" else f"AgX - {post['look']}"
    except TypeError:
        vs.look = "None"
    vs.exposure = auto_exposure(spec) + post["exposure_ev"]


def _albedo(rgb: Any) -> float:
    return max(0.03, float(0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2]))


def auto_exposure(spec: SceneSpec) -> float:
    """EV that brings the lit ground to a mid tone, from the light's power (no test render).

    Diffuse radiance is albedo * (sun * sin(elevation) / pi + sky) outdoors, and
    albedo * sum(P cos / (pi^2 d^2)) under area lamps; mid grey lands near 0.18. Low-light
    scenes are left 1-2.5 EV under, and AgX needs +0.8 EV for a mid grey, so their sensor noise shows.
    """
    light = spec.conditions["light"]
    a = _albedo(lin(spec.conditions["ground_params"]["base"]))
    if light["type"] == "sun":
        e = light["sun_strength"] * math.sin(math.radians(light["sun_elevation_deg"])) / math.pi
        e += light["sky_strength"] * 0.8
    elif light["type"] == "overcast":
        e = light["sky_strength"] * 0.9
    else:
        e = light["ambient"]
        for lamp in light["lamps"]:
            x, y, z = lamp["position_m"]
            d2 = x * x + y * y + z * z
            e += lamp["power_w"] * (z / math.sqrt(d2)) / (math.pi**2 * d2)
        if light.get("window_light"):
            e += 1.5 * 0.77 / math.pi
    ev = 0.8 + math.log2(0.18 / (a * e)) + 0.5 * math.log2(a / 0.2)  # dark grounds stay dark
    if light["type"] == "low_light":
        ev -= 1.0 + (spec.seed % 7) / 4
    return round(ev, 3)


def _shoot(spec: SceneSpec, out_png: str, pieces: list[Any], t0: float) -> dict[str, Any]:
    """Everything after the pieces are at rest: hand, light, camera, visibility, the render.

    Shared by single scenes and sequence frames, so both are lit, framed and timed alike.
    """
    cam = camera_for(spec)
    hand = _build_hand(spec, cam)
    _build_light(spec)
    _build_camera(spec, cam)
    bpy.context.view_layer.update()
    vis = measure_visibility(spec, pieces, hand, cam)
    casters = _build_shadow_casters(spec)
    _setup_render(spec, out_png)
    t1 = time.perf_counter()
    bpy.ops.render.render(write_still=True)
    t2 = time.perf_counter()
    return {
        "camera": cam,
        "visibility": vis,
        "casters": casters,
        "render_seconds": round(t2 - t1, 2),
        "build_seconds": round(t1 - t0, 2),
        "renderer": f"blender-cycles (bpy {bpy.app.version_string})",
        "samples": SAMPLES,
        "denoiser": "OpenImageDenoise (albedo + normal)",
    }


def render_scene(spec: SceneSpec, out_png: str) -> dict[str, Any]:
    """Build, simulate and render the scene to out_png; return what the truth writer needs."""
    t0 = time.perf_counter()
    bpy.ops.wm.read_factory_settings(use_empty=True)
    _build_ground(spec)
    pieces = _build_pieces(spec)
    physics = _simulate(pieces, spec)
    shot = _shoot(spec, out_png, pieces, t0)
    return {
        **shot,
        "positions": np.array([list(o.matrix_world.translation) for o in pieces]),
        "sizes": [max(o.dimensions) for o in pieces],
        "physics": physics,
    }


def render_frame(
    spec: SceneSpec, out_png: str, kept: dict[int, tuple[float, ...]]
) -> dict[str, Any]:
    """Render one frame of a sequence: like :func:`render_scene`, but the pieces in `kept`
    lie at their recorded poses (position, then quaternion w, x, y, z) and only the others
    are dropped by the physics, onto them. Also returns every piece's resting pose."""
    t0 = time.perf_counter()
    bpy.ops.wm.read_factory_settings(use_empty=True)
    _build_ground(spec)
    pieces = _build_pieces(spec)
    for o, p in zip(pieces, spec.pieces, strict=True):
        if p.id in kept:
            pose = kept[p.id]
            o.rotation_mode = "QUATERNION"
            o.location = pose[:3]
            o.rotation_quaternion = pose[3:]
    resting = frozenset(o.name for o, p in zip(pieces, spec.pieces, strict=True) if p.id in kept)
    if len(resting) < len(pieces):
        physics = _simulate(pieces, spec, resting)
    else:
        physics = {"engine": "none: every piece kept its pose", "frames": 0, "seconds": 0.0}
    physics["dropped"] = len(pieces) - len(resting)
    shot = _shoot(spec, out_png, pieces, t0)
    poses = []
    for o, p in zip(pieces, spec.pieces, strict=True):
        loc, quat, _ = o.matrix_world.decompose()
        poses.append(kept.get(p.id) or (*(float(v) for v in loc), *(float(v) for v in quat)))
    return {
        **shot,
        "positions": np.array([list(pose[:3]) for pose in poses]),
        "sizes": [max(o.dimensions) for o in pieces],
        "poses": poses,
        "physics": physics,
    }
