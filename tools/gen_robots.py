"""Generate the built-in robots published in standard DH: puma560_corke, stanford, wam7.

Run from the repository root:  PYTHONPATH=src python tools/gen_robots.py
The numbers below are copied from the cited sources; the conversion is robodyn.model.dh.from_standard_dh
and the files are written with robodyn.dumps (full float precision).
"""

from __future__ import annotations

from math import pi
from pathlib import Path

import numpy as np

from robodyn import dumps
from robodyn.model.dh import from_standard_dh

OUT = Path(__file__).resolve().parents[1] / "src" / "robodyn" / "robots"
DEG = pi / 180
INCH = 0.0254


def rtb_inertia(Ixx, Iyy, Izz, Ixy=0.0, Iyz=0.0, Ixz=0.0):
    """Robotics Toolbox order I = [Ixx, Iyy, Izz, Ixy, Iyz, Ixz] → 3x3."""
    return np.array([[Ixx, Ixy, Ixz], [Ixy, Iyy, Iyz], [Ixz, Iyz, Izz]])


def puma560_corke():
    # robotics-toolbox-python 1.5 roboticstoolbox/models/DH/Puma560.py (Corke & Armstrong-Helouvry 1994).
    G = np.array([-62.6111, 107.815, -53.7063, 76.0364, 71.923, 76.686])
    Jm = np.array([200e-6, 200e-6, 200e-6, 33e-6, 33e-6, 33e-6])
    B = np.array([1.48e-3, 0.817e-3, 1.38e-3, 71.2e-6, 82.6e-6, 36.7e-6])
    Tc = np.array([[0.395, -0.435], [0.126, -0.071], [0.132, -0.105], [11.2e-3, -16.9e-3], [9.26e-3, -14.5e-3], [3.96e-3, -10.5e-3]])
    I = [
        rtb_inertia(0, 0.35, 0),
        rtb_inertia(0.13, 0.524, 0.539),
        # Published Iyy3 = 0.086 violates the triangle inequality (0.066 + 0.0125 < 0.086); AKB's measured
        # value for the same moment is 0.066 (one digit apart): used here.
        rtb_inertia(0.066, 0.066, 0.0125),
        rtb_inertia(1.8e-3, 1.3e-3, 1.8e-3),
        rtb_inertia(0.3e-3, 0.4e-3, 0.3e-3),
        rtb_inertia(0.15e-3, 0.15e-3, 0.04e-3),
    ]
    qlim = np.array([[-160, 160], [-45, 225], [-225, 45], [-110, 170], [-100, 100], [-266, 266]]) * DEG
    return from_standard_dh(
        a=[0, 0.4318, 0.0203, 0, 0, 0],
        alpha=[pi / 2, 0, -pi / 2, pi / 2, -pi / 2, 0],
        d=[26.45 * INCH, 0, 0.15005, 0.4318, 0, 0],
        theta=np.zeros(6),
        masses=[0, 17.4, 4.8, 0.82, 0.34, 0.09],
        coms=[[0, 0, 0], [-0.3638, 0.006, 0.2275], [-0.0203, -0.0141, 0.070], [0, 0.019, 0], [0, 0, 0], [0, 0, 0.032]],
        inertias_com=I,
        Ia=G**2 * Jm,
        Fv=G**2 * B,
        Fc=np.abs(G) * np.abs(Tc).mean(axis=1),
        qlim=qlim,
        name="puma560_corke",
        gravity=[0, 0, -9.81],
        source=(
            "Unimation PUMA 560, Corke & Armstrong-Helouvry (ICRA 1994) consensus model in standard DH, as in "
            "robotics-toolbox-python 1.5 roboticstoolbox/models/DH/Puma560.py, converted to modified DH by "
            "robodyn.model.from_standard_dh (tools/gen_robots.py). d1 = 26.45 inch = 0.67183 m (pedestal: mounting "
            "surface to shoulder axis, as in that file). Ia = G^2 Jm; Fv = G^2 B; Fc = |G| mean(|Tc+|, |Tc-|) "
            "(motor-side Coulomb friction made symmetric, referred to the joint). Link 1: m = 0, inertia 0.35 "
            "about the joint axis as published. Link 3: published Iyy = 0.086 violates the triangle inequality; "
            "0.066 (Armstrong-Khatib-Burdick's value for the same moment) is used. Joint limits: the file's qlim."
        ),
    )


def stanford():
    # robotics-toolbox-python 1.5 roboticstoolbox/models/DH/Stanford.py (Paul 1981 Tables 6.5, 6.6; AIM-177).
    I = [
        rtb_inertia(0.276, 0.255, 0.071),
        rtb_inertia(0.108, 0.018, 0.100),
        rtb_inertia(2.51, 2.51, 0.006),
        rtb_inertia(0.002, 0.001, 0.001),
        # Published [0.003, 0.0004, 0] violates the triangle inequality: Izz raised to 0.0026, the smallest value
        # that satisfies it (Ixx = Iyy + Izz).
        rtb_inertia(0.003, 0.0004, 0.0026),
        rtb_inertia(0.013, 0.013, 0.0003),
    ]
    lim = 170 * DEG
    return from_standard_dh(
        a=[0, 0, 0.0203, 0, 0, 0],
        alpha=[-pi / 2, pi / 2, 0, -pi / 2, pi / 2, 0],
        d=[0.412, 0.154, 0, 0, 0, 0],
        theta=[0, 0, -pi / 2, 0, 0, 0],
        sigma=[0, 0, 1, 0, 0, 0],
        masses=[9.29, 5.01, 4.25, 1.08, 0.630, 0.51],
        coms=[[0, 0.0175, -0.1105], [0, -1.054, 0], [0, 0, -6.447], [0, 0.092, -0.054], [0, 0.566, 0.003], [0, 0, 1.554]],
        inertias_com=I,
        Ia=[0.953, 2.193, 0.782, 0.106, 0.097, 0.020],
        qlim=[[-lim, lim], [-lim, lim], [12 * INCH, 50 * INCH], [-lim, lim], [-90 * DEG, 90 * DEG], [-lim, lim]],
        name="stanford",
        gravity=[0, 0, -9.81],
        source=(
            "Stanford arm (RRPRRR), robotics-toolbox-python 1.5 roboticstoolbox/models/DH/Stanford.py (kinematics "
            "from Stanford AIM-177 Fig. 2.3, dynamics from Paul 1981 Tables 6.5, 6.6), standard DH converted to "
            "modified DH by robodyn.model.from_standard_dh (tools/gen_robots.py). The file gives reflected armature "
            "inertia with G = 1: Ia = Jm. No friction given. Link 5: published inertia [0.003, 0.0004, 0] violates "
            "the triangle inequality; Izz5 = 0.0026 (smallest consistent value) is used. WARNING: the centres of "
            "mass of links 2, 3, 6 are implausible but really are the toolbox file's numbers (checked in the "
            "installed Stanford.py: r = [0, -1.054, 0], [0, 0, -6.447], [0, 0, 1.554] m in the SDH link frames), "
            "likely a unit error in the source (about 10x too large); no corrected values are published, so "
            "they are kept verbatim and the model equals the toolbox's, not the real arm."
        ),
    )


#: WAM joint limits (rad): lower and upper of the 7 joints, libbarrett's joint angles (= this model's q).
WAM_QLIM = [[-2.6, 2.6], [-1.98, 1.98], [-2.8, 2.8], [-0.9, 3.1], [-4.55, 1.25], [-1.57, 1.57], [-2.95, 2.95]]


def wam7():
    # libbarrett config/wam7w.conf: kinematics (SDH) and "inertial specifications Sept 2008".
    mass = [10.7677, 3.8749, 1.8023, 2.17266212, 0.35655692, 0.40915886, 0.07548270]
    com = [
        [-4.43e-3, 121.89e-3, -0.66e-3],
        [-2.37e-3, 31.06e-3, 15.42e-3],
        [-38.26e-3, 207.51e-3, 0.03e-3],
        [0.00553408, 0.00006822, 0.11927695],
        [0.00005483, 0.02886286, 0.00148493],
        [-0.00005923, -0.01686123, 0.02419052],
        [0.00014836, 0.00007252, -0.00335185],
    ]
    u = 1e-6
    I = np.array([
        [[134880.33 * u, -2130.41 * u, -124.85 * u], [-2130.41 * u, 113283.69 * u, 685.55 * u], [-124.85 * u, 685.55 * u, 90463.30 * u]],
        [[21409.58 * u, 271.72 * u, 24.61 * u], [271.72 * u, 13778.75 * u, -1819.20 * u], [24.61 * u, -1819.20 * u, 15589.06 * u]],
        [[59110.77 * u, -2496.12 * u, 7.38 * u], [-2496.12 * u, 3245.50 * u, -17.67 * u], [7.38 * u, -17.67 * u, 59270.43 * u]],
        [[0.01067491, 0.00004503, -0.00135557], [0.00004503, 0.01058659, -0.00011002], [-0.00135557, -0.00011002, 0.00282036]],
        [[0.00037112, -0.00000008, -0.00000003], [-0.00000008, 0.00019434, -0.00001613], [-0.00000003, -0.00001613, 0.00038209]],
        [[0.00054889, 0.00000019, -0.00000010], [0.00000019, 0.00023846, -0.00004430], [-0.00000010, -0.00004430, 0.00045133]],
        [[0.00003911, 0.00000019, 0.0], [0.00000019, 0.00003877, 0.0], [0.0, 0.0, 0.00007614]],
    ])
    return from_standard_dh(
        a=[0, 0, 0.045, -0.045, 0, 0, 0],
        alpha=[-pi / 2, pi / 2, -pi / 2, pi / 2, -pi / 2, pi / 2, -pi / 2],
        d=[0, 0, 0.55, 0, 0.3, 0, 0.0609],
        theta=np.zeros(7),
        masses=mass,
        coms=com,
        inertias_com=I,
        tool_frame=False,
        qlim=WAM_QLIM,
        name="wam7",
        gravity=[0, 0, -9.81],
        joint_names=["base_yaw", "base_pitch", "twist", "elbow", "wrist_yaw", "wrist_pitch", "wrist_twist"],
        source=(
            "Barrett WAM 7-DOF with wrist, libbarrett config/wam7w.conf (kinematics, standard DH; 'inertial "
            "specifications Sept 2008': mass, centre of mass and inertia in the SDH link frames), converted to "
            "modified DH by robodyn.model.from_standard_dh (tools/gen_robots.py). ASSUMPTION: the file does not say "
            "about which point the inertia tensors are given; they are read as about the centre of mass. The "
            "toolplate frame (alpha = pi/2 after SDH frame 7) coincides with frame 7 here (Rx(-pi/2) Rx(pi/2) = I), "
            "so no extra frame. Rotor inertia and friction are not in that file: 0. Joint limits (rad): the ranges "
            "of the WAM URDF (jhu-lcsr/barrett_model) as used in a public WAM configuration, slightly inside "
            "Barrett's published ranges (about +-2.6, +-2.0, +-2.8, -0.9..3.1, -4.76..1.24, +-1.6, +-3.0); see "
            "docs/robots.md. Check them against your arm's manual before moving hardware."
        ),
    )


#: Comment lines written above a generated file (sources of the limits, which the model schema has no field for).
HEADER = {
    "wam7": "# Joint limits: see the source field and docs/robots.md (velocity and torque limits are not in the\n"
            "# model schema; docs/robots.md lists what Barrett publishes).\n",
    "puma560_corke": "# Joint limits: qlim of robotics-toolbox-python models/DH/Puma560.py (Corke's convention of q).\n",
}


def main() -> None:
    for robot in (puma560_corke(), stanford(), wam7()):
        text = f"# Generated by tools/gen_robots.py; do not edit by hand.\n{HEADER.get(robot.name, '')}{dumps(robot)}"
        (OUT / f"{robot.name}.yaml").write_text(text, encoding="utf-8")
        print(f"wrote {robot.name}: {robot!r}")


if __name__ == "__main__":
    main()
