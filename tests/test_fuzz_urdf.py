"""Fuzzing the URDF loader (issue 25, item 3; issue 21, §1): every mutation of the kinematic graph or of the
numbers of a URDF either loads as a valid Robot or raises a RobodynError — never another exception, never a
hang, never a URDF accepted silently as a different robot (duplicate names, two parents, cycles).

The URDFs are the built-in robots' exports and arms of example-robot-data.  Mutations act on the XML tree
(parents and children rewired into cycles, self-loops and two-parent links, names duplicated or removed, links
deleted, vectors with 2 or 4 numbers, non-finite numbers, mimic tags, joint types) and on the text (cuts and
inserted tokens).  The examples are derandomised (a fixed seed), each under a time limit (``signal.alarm``);
``from_urdf`` is also called with random ``base``/``tip`` links, which must end (no walk up a cycle).
"""

import importlib.metadata
import os
import signal
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import robodyn as rd
from tests.support.checks import CaseTimeout

pytest.importorskip("yourdfpy")


def _exported(name):
    robot = rd.load(name).replace(Ia=None, Foff=None, Fst=None, gravity=[0, 0, -9.81])
    return rd.to_urdf(robot)


def _example_robot_data():
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        return {}
    out = {}
    for rel in ("ur_description/urdf/ur5_robot.urdf", "panda_description/urdf/panda.urdf",
                "z1_description/urdf/z1.urdf", "so_arm_description/urdf/so100.urdf"):
        path = Path(dist.locate_file(f"cmeel.prefix/share/example-robot-data/robots/{rel}"))
        if path.is_file():
            out[path.stem] = path.read_text(encoding="utf-8")
    return out


SOURCES = {name: _exported(name) for name in ("planar2r", "rx90", "puma560", "stanford", "panda", "pr")}
SOURCES.update(_example_robot_data())
PER_CASE_SECONDS = 5
FUZZ = settings(
    max_examples=1000 if os.environ.get("CI") else 150,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
NUMBERS = ["nan", "inf", "-inf", "1e999", "NaN", "0x10", "1_0", "", " ", "1,2", "é", "1e-320", "-0", "1e300", "2"]
VECTORS = ["0 0", "0 0 0 0", "1 2 3 4 5", "nan 0 0", "0 inf 0", "1e999 0 0", "0,0,0", "", "0 0 x", "1 0 0",
           "0 0 0", "\t1\n0 0 "]
JOINT_TYPES = ["revolute", "continuous", "prismatic", "fixed", "floating", "planar", "spherical", "", "REVOLUTE"]


@st.composite
def graph_mutation(draw):
    root = ET.fromstring(SOURCES[draw(st.sampled_from(sorted(SOURCES)))].encode("utf-8"))
    for _ in range(draw(st.integers(1, 3))):
        links = root.findall("link")
        joints = root.findall("joint")
        link_names = [el.get("name") for el in links if el.get("name") is not None] + ["nowhere", ""]
        action = draw(st.sampled_from(["rewire", "swap", "self", "dup_link", "dup_joint", "drop_link", "drop_end",
                                       "two_ends", "rename", "unname", "vector", "number", "mimic", "type",
                                       "drop_joints", "root_tag"]))
        if action in ("rewire", "swap", "self", "drop_end", "two_ends", "mimic", "type") and not joints:
            continue
        j = draw(st.sampled_from(joints)) if joints else None
        if action == "rewire":  # a parent or child moved anywhere: cycles, two parents, unreachable links
            end = j.find(draw(st.sampled_from(["parent", "child"])))
            if end is not None:
                end.set("link", draw(st.sampled_from(link_names)))
        elif action == "swap":  # parent and child exchanged: a cycle when the rest of the chain stays
            p, c = j.find("parent"), j.find("child")
            if p is not None and c is not None:
                a, b = p.get("link"), c.get("link")
                p.set("link", b)
                c.set("link", a)
        elif action == "self":
            c = j.find("child")
            if c is not None and j.find("parent") is not None:
                c.set("link", j.find("parent").get("link"))
        elif action == "dup_link":
            root.append(ET.fromstring(ET.tostring(draw(st.sampled_from(links)))))
        elif action == "dup_joint" and joints:
            copy = ET.fromstring(ET.tostring(draw(st.sampled_from(joints))))
            if draw(st.booleans()):  # a second joint of the same name, or a differently named second parent
                copy.set("name", copy.get("name", "") + "_again")
            root.append(copy)
        elif action == "drop_link" and links:
            root.remove(draw(st.sampled_from(links)))
        elif action == "drop_end":
            end = j.find(draw(st.sampled_from(["parent", "child"])))
            if end is not None:
                j.remove(end)
        elif action == "two_ends":
            ET.SubElement(j, draw(st.sampled_from(["parent", "child"])), link=draw(st.sampled_from(link_names)))
        elif action == "rename":
            el = draw(st.sampled_from(links + joints))
            el.set("name", draw(st.sampled_from(link_names + [el.get("name", "") + "2"])))
        elif action == "unname":
            el = draw(st.sampled_from(links + joints))
            el.attrib.pop("name", None)
        elif action == "vector":
            targets = [el for el in root.iter() if el.tag in ("origin", "axis")]
            if targets:
                el = draw(st.sampled_from(targets))
                el.set(draw(st.sampled_from(["xyz", "rpy"] if el.tag == "origin" else ["xyz"])),
                       draw(st.sampled_from(VECTORS)))
        elif action == "number":
            choices = [(el, a) for el in root.iter() for a in
                       {"mass": ["value"], "inertia": ["ixx", "iyy", "izz", "ixy"], "limit": ["lower", "upper"],
                        "dynamics": ["damping", "friction"]}.get(el.tag, [])]
            if choices:
                el, attr = draw(st.sampled_from(choices))
                el.set(attr, draw(st.sampled_from(NUMBERS)))
        elif action == "mimic":  # mimic tags: unknown joints, themselves, cycles, non-finite factors
            mimic = j.find("mimic")
            if mimic is None:
                mimic = ET.SubElement(j, "mimic")
            mimic.set("joint", draw(st.sampled_from([k.get("name", "") for k in joints] + ["ghost"])))
            mimic.set(draw(st.sampled_from(["multiplier", "offset"])), draw(st.sampled_from(NUMBERS)))
        elif action == "type":
            j.set("type", draw(st.sampled_from(JOINT_TYPES)))
        elif action == "drop_joints":
            for k in joints:
                root.remove(k)
        elif action == "root_tag":
            root.tag = draw(st.sampled_from(["robot", "Robot", "model", "sdf"]))
    links = [el.get("name") for el in root.findall("link") if el.get("name")]
    tip = draw(st.one_of(st.none(), st.sampled_from(links + ["ghost"])))
    base = draw(st.one_of(st.none(), st.sampled_from(links + ["ghost"]))) if draw(st.booleans()) else None
    return ET.tostring(root, encoding="unicode"), base, tip


@st.composite
def text_mutation(draw):
    text = SOURCES[draw(st.sampled_from(sorted(SOURCES)))]
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(text)))
        action = draw(st.sampled_from(["cut", "insert", "replace"]))
        if action == "cut":
            text = text[:i] + text[i + draw(st.integers(1, 300)):]
        elif action == "insert":
            text = text[:i] + draw(st.sampled_from(["<", ">", '"', "<joint>", "</link>", "&amp;", "&bogus;",
                                                    "\x00", "\ufeff", "<!-- -->", "<![CDATA[x]]>"])) + text[i:]
        else:
            word = draw(st.sampled_from(['parent link="', 'child link="', 'name="', 'xyz="', 'type="']))
            text = text.replace(word, word + draw(st.sampled_from(["x", "0 ", "nan ", ""])), 1)
    return text




def check_urdf(text, base=None, tip=None):
    signal.alarm(PER_CASE_SECONDS)
    try:
        try:
            robot = rd.from_urdf(text, base=base, tip=tip, strict=False)
        except rd.RobodynError as exc:
            event(type(exc).__name__)
            assert "\n" not in str(exc).strip()  # one line
            return
        except CaseTimeout:
            pytest.fail(f"from_urdf took more than {PER_CASE_SECONDS} s:\n{text[:500]}")
        event("loaded")
        assert robot.n >= 0 and robot.nf >= 1
        assert len(set(robot.frame_names)) == robot.nf  # no duplicate accepted as a different robot
        assert np.all(robot.antecedent < np.arange(1, robot.nf + 1))  # a tree, antecedents first
        for key in ("gamma", "b", "alpha", "d", "theta", "r", "params", "Fc", "Fv", "gravity"):
            assert np.all(np.isfinite(getattr(robot, key))), key
        try:
            rd.model.mimic_coupling(text, robot)
        except rd.RobodynError:
            pass
        # what robodyn writes, robodyn reads back
        try:
            exported = rd.to_urdf(robot)
        except rd.RobodynError:
            return
        again = rd.from_urdf(exported, prune=False, strict=False)
        assert again.joint_names == robot.joint_names
        np.testing.assert_allclose(again.params, robot.params, rtol=1e-9, atol=1e-9)
    except CaseTimeout:
        pytest.fail(f"from_urdf took more than {PER_CASE_SECONDS} s:\n{text[:500]}")
    finally:
        signal.alarm(0)


@pytest.mark.filterwarnings("ignore::UserWarning")
@FUZZ
@given(case=graph_mutation())
def test_graph_mutations_load_or_raise_robodyn_error(case, time_limit):
    text, base, tip = case
    check_urdf(text, base, tip)


@pytest.mark.filterwarnings("ignore::UserWarning")
@FUZZ
@given(text=text_mutation())
def test_text_mutations_load_or_raise_robodyn_error(text, time_limit):
    check_urdf(text)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_unmutated_sources_load(time_limit):
    """The fuzz starts from URDFs that load: the mutations, not the sources, are what gets refused."""
    for name, text in SOURCES.items():
        signal.alarm(PER_CASE_SECONDS)
        robot = rd.from_urdf(text)
        signal.alarm(0)
        assert robot.n >= 2, name
