// Pinocchio's algorithms called in a C++ loop over states: the anchor of benchmarks/bench_pinocchio_cpp.py.
//
// Usage: bench MODEL STATES N REPEAT OUT BATCH [cpu]
//   MODEL   text: "gravity gx gy gz", then one line per joint "TYPE parent R00..R22 p0 p1 p2 m c0 c1 c2
//           Ixx Ixy Iyy Ixz Iyz Izz" (placement in the parent joint's frame, inertia about the centre of mass),
//           then "armature a_1 ... a_nv"; TYPE is RX, RY, RZ, PX, PY, PZ or FF (free flyer).
//   STATES  N states of float64, each q (nq), v (nv), a (nv), tau (nv).
//   OUT     results of the first few states, float64 column-major, in the order the timings are printed.
//   BATCH   states of the "crba_batch" loops: crba, its M mirrored whole and copied out into a batch array of
//           BATCH nv x nv matrices, fresh (malloc'd, untouched) for each loop, as a batched call returns it.
// Prints "name microseconds-per-state" for each algorithm: the best of REPEAT loops over the N states, in wall time,
// or with "cpu" in this thread's CPU time (time slices lost to other processes on a shared machine not counted).
#include <pinocchio/algorithm/aba-derivatives.hpp>
#include <pinocchio/algorithm/aba.hpp>
#include <pinocchio/algorithm/crba.hpp>
#include <pinocchio/algorithm/regressor.hpp>
#include <pinocchio/algorithm/rnea-derivatives.hpp>
#include <pinocchio/algorithm/rnea.hpp>
#include <pinocchio/multibody.hpp>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

using namespace pinocchio;
using Eigen::MatrixXd;
using Eigen::VectorXd;

static const int CHECKED = 3;  // states whose results are written to OUT

static Model read_model(const char *path) {
  std::ifstream in(path);
  if (!in) { std::cerr << "cannot read " << path << "\n"; std::exit(2); }
  Model model;
  std::string word;
  double gx, gy, gz;
  in >> word >> gx >> gy >> gz;
  model.gravity.linear(Eigen::Vector3d(gx, gy, gz));
  int count = 0;
  while (in >> word && word != "armature") {
    int parent;
    Eigen::Matrix3d R, I;
    Eigen::Vector3d p, c;
    double m, ixx, ixy, iyy, ixz, iyz, izz;
    in >> parent;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) in >> R(i, j);
    in >> p[0] >> p[1] >> p[2] >> m >> c[0] >> c[1] >> c[2] >> ixx >> ixy >> iyy >> ixz >> iyz >> izz;
    I << ixx, ixy, ixz, ixy, iyy, iyz, ixz, iyz, izz;
    const SE3 placement(R, p);
    const std::string name = "j" + std::to_string(++count);
    JointIndex id;
    if (word == "RX") id = model.addJoint(parent, JointModelRX(), placement, name);
    else if (word == "RY") id = model.addJoint(parent, JointModelRY(), placement, name);
    else if (word == "RZ") id = model.addJoint(parent, JointModelRZ(), placement, name);
    else if (word == "PX") id = model.addJoint(parent, JointModelPX(), placement, name);
    else if (word == "PY") id = model.addJoint(parent, JointModelPY(), placement, name);
    else if (word == "PZ") id = model.addJoint(parent, JointModelPZ(), placement, name);
    else if (word == "FF") id = model.addJoint(parent, JointModelFreeFlyer(), placement, name);
    else { std::cerr << "unknown joint type " << word << "\n"; std::exit(2); }
    model.appendBodyToJoint(id, Inertia(m, c, Symmetric3(I)), SE3::Identity());
  }
  for (int i = 0; i < model.nv; ++i) in >> model.armature[i];
  if (!in) { std::cerr << "malformed model file " << path << "\n"; std::exit(2); }
  return model;
}

static double seconds(bool cpu) {
  if (!cpu) return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

int main(int argc, char **argv) {
  if (argc != 7 && argc != 8) { std::cerr << "usage: bench MODEL STATES N REPEAT OUT BATCH [cpu]\n"; return 2; }
  const bool cpu = argc == 8 && std::string(argv[7]) == "cpu";
  const Model model = read_model(argv[1]);
  Data data(model);
  const int n = std::atoi(argv[3]), repeat = std::atoi(argv[4]);
  const int batch_states = std::max(1, std::min(n, std::atoi(argv[6])));
  const int nq = model.nq, nv = model.nv, width = nq + 3 * nv;
  std::vector<double> raw(static_cast<size_t>(n) * width);
  {
    std::FILE *f = std::fopen(argv[2], "rb");
    if (!f || std::fread(raw.data(), sizeof(double), raw.size(), f) != raw.size()) {
      std::cerr << "cannot read " << n << " states from " << argv[2] << "\n";
      return 2;
    }
    std::fclose(f);
  }
  std::vector<VectorXd> q(n), v(n), a(n), tau(n);
  for (int s = 0; s < n; ++s) {
    const double *x = raw.data() + static_cast<size_t>(s) * width;
    q[s] = Eigen::Map<const VectorXd>(x, nq);
    v[s] = Eigen::Map<const VectorXd>(x + nq, nv);
    a[s] = Eigen::Map<const VectorXd>(x + nq + nv, nv);
    tau[s] = Eigen::Map<const VectorXd>(x + nq + 2 * nv, nv);
  }
  VectorXd params(10 * (model.njoints - 1));  // Pinocchio's dynamic parameters: Y params = the rigid-body torque
  for (JointIndex j = 1; j < static_cast<JointIndex>(model.njoints); ++j)
    params.segment<10>(10 * (j - 1)) = model.inertias[j].toDynamicParameters();

  // name, call on state s, the results to check after the call, states per loop (0: all), batch output per state
  struct Case {
    std::string name;
    std::function<void(int)> call;
    std::function<std::vector<MatrixXd>()> results;
    int states = 0;
    size_t batch = 0;
  };
  double *batch = nullptr;  // the batch array of the "_batch" cases, fresh for each loop
  int copied = 0;           // the state last copied into it
  const size_t nvnv = static_cast<size_t>(nv) * nv;
  // the user's batch needs the whole symmetric matrix (crba fills the upper triangle) in its own slot: mirrored in
  // data.M (in the cache), then copied in the order of the batch
  auto copy_out = [&](int s) {
    data.M.triangularView<Eigen::StrictlyLower>() = data.M.transpose().triangularView<Eigen::StrictlyLower>();
    std::memcpy(batch + nvnv * static_cast<size_t>(s), data.M.data(), sizeof(double) * nvnv);
    copied = s;
  };
  auto batch_result = [&] {
    return std::vector<MatrixXd>{Eigen::Map<const MatrixXd>(batch + nvnv * static_cast<size_t>(copied), nv, nv)};
  };
  const bool fixed = model.joints[1].shortname() != "JointModelFreeFlyer";
  std::vector<Case> cases = {
      {"rnea", [&](int s) { rnea(model, data, q[s], v[s], a[s]); }, [&] { return std::vector<MatrixXd>{data.tau}; }},
      {"crba", [&](int s) { crba(model, data, q[s]); }, [&] { return std::vector<MatrixXd>{data.M}; }},
      {"aba", [&](int s) { aba(model, data, q[s], v[s], tau[s]); }, [&] { return std::vector<MatrixXd>{data.ddq}; }},
      // the other convention of Pinocchio's crba and aba (quantities in the world frame): the faster one is the anchor
      {"crba_world", [&](int s) { crba(model, data, q[s], Convention::WORLD); },
       [&] { return std::vector<MatrixXd>{data.M}; }},
      {"aba_world", [&](int s) { aba(model, data, q[s], v[s], tau[s], Convention::WORLD); },
       [&] { return std::vector<MatrixXd>{data.ddq}; }},
      {"crba_batch", [&](int s) { crba(model, data, q[s]); copy_out(s); }, batch_result, batch_states, nvnv},
      {"crba_batch_world", [&](int s) { crba(model, data, q[s], Convention::WORLD); copy_out(s); }, batch_result,
       batch_states, nvnv},
  };
  if (fixed) {
    cases.push_back({"regressor", [&](int s) { computeJointTorqueRegressor(model, data, q[s], v[s], a[s]); },
                     [&] { return std::vector<MatrixXd>{data.jointTorqueRegressor * params}; }});
    cases.push_back({"rnea_derivatives", [&](int s) { computeRNEADerivatives(model, data, q[s], v[s], a[s]); },
                     [&] { return std::vector<MatrixXd>{data.dtau_dq, data.dtau_dv}; }});
    cases.push_back({"aba_derivatives", [&](int s) { computeABADerivatives(model, data, q[s], v[s], tau[s]); },
                     [&] { return std::vector<MatrixXd>{data.ddq_dq, data.ddq_dv}; }});
  }
  std::FILE *out = std::fopen(argv[5], "wb");
  if (!out) { std::cerr << "cannot write " << argv[5] << "\n"; return 2; }
  volatile double sink = 0;
  for (const Case &c : cases) {
    const int states = c.states ? c.states : n;
    auto fresh = [&] {
      const size_t bytes = sizeof(double) * c.batch * static_cast<size_t>(std::max(states, CHECKED));
      batch = c.batch ? static_cast<double *>(std::malloc(bytes)) : nullptr;
      if (c.batch && !batch) { std::cerr << "out of memory for the batch of " << c.name << "\n"; std::exit(2); }
    };
    fresh();
    for (int s = 0; s < CHECKED && s < n; ++s) {
      c.call(s);
      for (const MatrixXd &r : c.results()) std::fwrite(r.data(), sizeof(double), r.size(), out);
    }
    double best = 1e300;
    for (int r = 0; r < repeat; ++r) {
      std::free(batch);
      fresh();
      const double t0 = seconds(cpu);
      for (int s = 0; s < states; ++s) c.call(s);
      const double t1 = seconds(cpu);
      sink = sink + data.tau[0] + data.ddq[0] + (batch ? batch[nvnv * (states - 1)] : 0.0);
      const double t = (t1 - t0) * 1e6 / states;
      if (t < best) best = t;
    }
    std::free(batch);
    batch = nullptr;
    std::printf("%s %.6f\n", c.name.c_str(), best);
  }
  std::fclose(out);
  return 0;
}
