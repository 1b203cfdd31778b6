"""rd.from_xacro: a URDF written with xacro macros, properties, math, an argument and an include gives the same
robot as the URDF written out by hand."""

from __future__ import annotations

import numpy as np
import pytest

import robodyn as rd
from robodyn.model.urdf import from_xacro

pytest.importorskip("xacro")

LINK = """<link name="{name}"><inertial><origin xyz="{x} 0 0.01" rpy="0 0 0"/><mass value="{m}"/>
<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.015"/></inertial></link>"""
JOINT = """<joint name="{name}" type="revolute"><parent link="{parent}"/><child link="{child}"/>
<origin xyz="{x} 0 0" rpy="{roll} 0 0"/><axis xyz="0 0 1"/>
<limit lower="-2" upper="2" effort="10" velocity="1"/></joint>"""


def _by_hand(length: float) -> str:
    parts = ['<robot name="arm"><link name="base"/>']
    parent = "base"
    for k, (roll, m) in enumerate([(0.0, 2.0), (np.pi / 2, 1.5), (-np.pi / 2, 1.0)], start=1):
        parts.append(LINK.format(name=f"l{k}", x=length / 2, m=m))
        parts.append(JOINT.format(name=f"j{k}", parent=parent, child=f"l{k}", x=0 if k == 1 else length,
                                  roll=repr(roll)))
        parent = f"l{k}"
    return "\n".join(parts) + "</robot>"


XACRO = """<?xml version="1.0"?>
<robot name="arm" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:arg name="length" default="0.3"/>
  <xacro:property name="L" value="$(arg length)"/>
  <xacro:include filename="parts.xacro"/>
  <link name="base"/>
  <xacro:segment k="1" parent="base" x="0" roll="0" m="2.0"/>
  <xacro:segment k="2" parent="l1" x="${L}" roll="${pi/2}" m="1.5"/>
  <xacro:segment k="3" parent="l2" x="${L}" roll="${-pi/2}" m="${2.0 / 2}"/>
</robot>
"""

PARTS = """<?xml version="1.0"?>
<robot xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:macro name="segment" params="k parent x roll m">
    <link name="l${k}"><inertial><origin xyz="${L / 2} 0 0.01" rpy="0 0 0"/><mass value="${m}"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.015"/></inertial></link>
    <joint name="j${k}" type="revolute"><parent link="${parent}"/><child link="l${k}"/>
      <origin xyz="${x} 0 0" rpy="${roll} 0 0"/><axis xyz="0 0 1"/>
      <limit lower="-2" upper="2" effort="10" velocity="1"/></joint>
  </xacro:macro>
</robot>
"""


@pytest.mark.parametrize("length", [None, "0.45"])
def test_xacro_expands_to_the_urdf_written_by_hand(tmp_path, length):
    (tmp_path / "parts.xacro").write_text(PARTS)
    path = tmp_path / "arm.urdf.xacro"
    path.write_text(XACRO)
    robot = from_xacro(path, mappings=None if length is None else {"length": length})
    expected = rd.from_urdf(_by_hand(0.3 if length is None else float(length)))
    assert robot.joint_names == ("j1", "j2", "j3") and "expanded by xacro from arm.urdf.xacro" in robot.source
    for key in ("alpha", "d", "theta", "r", "params", "qlim"):
        np.testing.assert_allclose(getattr(robot, key), getattr(expected, key), rtol=0, atol=1e-15)
    q = np.random.default_rng(2).uniform(-1, 1, (4, 3))
    np.testing.assert_allclose(rd.inverse_dynamics(robot, q, q, q), rd.inverse_dynamics(expected, q, q, q),
                               rtol=0, atol=1e-13)


def test_xacro_errors_are_model_file_errors(tmp_path):
    path = tmp_path / "bad.xacro"
    path.write_text(XACRO)  # parts.xacro missing
    with pytest.raises(rd.ModelFileError, match="bad.xacro: xacro cannot expand it"):
        from_xacro(path)
    with pytest.raises(rd.InputError, match="give the path of a .xacro file"):
        from_xacro(XACRO)
