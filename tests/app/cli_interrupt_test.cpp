// Ctrl-C and kills: every writing command stopped by SIGINT exits 130 and leaves neither its
// output nor a temporary folder; a run killed by SIGKILL leaves a temporary folder that the next
// run on the same output removes, and nothing else in the folder is touched.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "io/stack_writer.h"
#include "temp_folder_test.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;
namespace io = stacklens::io;
using Clock = std::chrono::steady_clock;

// The CLI started with its stderr in a file, signalled and waited for.
class RunningCli {
 public:
  RunningCli(const std::vector<std::string>& args, const std::string& errPath) {
    std::vector<std::string> argv{STACKLENS_CLI};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> raw;
    for (auto& a : argv) raw.push_back(a.data());
    raw.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    if (posix_spawn(&pid_, raw[0], &actions, nullptr, raw.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
  }
  ~RunningCli() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  pid_t pid() const { return pid_; }

  // Waits until the process has caught SIGINT (its handler is installed: /proc's SigCgt) and has
  // used cpuSeconds of processor time, so that a signal sent then lands in the middle of the work
  // however loaded the machine is. False if it ended first or took longer than timeout.
  bool waitUntilBusy(double cpuSeconds, double timeout = 120) {
    const auto started = Clock::now();
    while (std::chrono::duration<double>(Clock::now() - started).count() < timeout) {
      if (::waitpid(pid_, &status_, WNOHANG) == pid_) {
        reaped_ = true;
        return false;
      }
      if (catchesSigint() && cpuTime() >= cpuSeconds) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return false;
  }

  // Sends signal and waits for the exit; returns the seconds it took (-1: not within timeout).
  double stopWith(int signal, double timeout = 120) {
    const auto sent = Clock::now();
    ::kill(pid_, signal);
    while (std::chrono::duration<double>(Clock::now() - sent).count() < timeout) {
      if (::waitpid(pid_, &status_, WNOHANG) == pid_) {
        reaped_ = true;
        return std::chrono::duration<double>(Clock::now() - sent).count();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return -1;
  }
  int status() const { return status_; }

 private:
  bool catchesSigint() const {
    std::ifstream in("/proc/" + std::to_string(pid_) + "/status");
    std::string line;
    while (std::getline(in, line))
      if (line.rfind("SigCgt:", 0) == 0)
        return (std::stoull(line.substr(7), nullptr, 16) >> (SIGINT - 1)) & 1;
    return false;
  }
  double cpuTime() const {
    std::ifstream in("/proc/" + std::to_string(pid_) + "/stat");
    std::string text((std::istreambuf_iterator<char>(in)), {});
    const size_t close = text.rfind(')');
    if (close == std::string::npos) return 0;
    std::istringstream fields(text.substr(close + 2));
    std::string f;
    double ticks = 0;
    for (int i = 3; i <= 15 && fields >> f; ++i)
      if (i == 14 || i == 15) ticks += std::stod(f);  // utime, stime
    return ticks / double(::sysconf(_SC_CLK_TCK));
  }

  pid_t pid_ = -1;
  int status_ = 0;
  bool reaped_ = false;
};

using stacklens::testing::readText;

std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  return names;
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += n + " ";
  return s;
}

// Inputs shared by the tests (made once), outputs in each test's own folder.
class CliInterrupt : public stacklens::testing::TempFolderTest {
 protected:
  CliInterrupt() : TempFolderTest("stacklens_cli_interrupt_") {}

  static void SetUpTestSuite() {
    inputs_ =
        fs::temp_directory_path() / ("stacklens_cli_interrupt_in_" + std::to_string(::getpid()));
    fs::create_directories(inputs_);
  }
  // A cube of beads on a noisy background: every command finds something to do.
  static std::string cube() {
    const std::string path = (inputs_ / "cube.fits").string();
    if (fs::exists(path)) return path;
    const int64_t z = 48, y = 256, x = 256;
    std::vector<float> v(size_t(z * y * x));
    uint32_t seed = 12345;
    for (size_t i = 0; i < v.size(); ++i) {
      seed = seed * 1664525u + 1013904223u;
      v[i] = 100.f + float(seed >> 24) / 32.f;
    }
    // Beads in the middle slice, apart and away from the edges: measure-psf takes them all.
    for (int64_t j = 48; j <= 208; j += 40)
      for (int64_t i = 48; i <= 208; i += 40)
        for (int64_t dk = -6; dk <= 6; ++dk)
          for (int64_t dj = -6; dj <= 6; ++dj)
            for (int64_t di = -6; di <= 6; ++di)
              v[size_t(((24 + dk) * y + j + dj) * x + i + di)] +=
                  1000.f *
                  std::exp(-0.5f * (float(dj * dj + di * di) / 2.25f + float(dk * dk) / 4.f));
    io::writeStack(path, v.data(), z, y, x, io::WriteOptions{});
    return path;
  }
  // A larger stack (256 MiB) for the commands whose time goes to reading and writing.
  static std::string big() {
    const std::string path = (inputs_ / "big.fits").string();
    if (fs::exists(path)) return path;
    const int64_t z = 64, y = 1024, x = 1024;
    std::vector<float> v(size_t(z * y * x));
    for (size_t i = 0; i < v.size(); ++i) v[i] = float(i % 4093);
    io::writeStack(path, v.data(), z, y, x, io::WriteOptions{});
    return path;
  }
  static void TearDownTestSuite() { fs::remove_all(inputs_); }

  // Runs the command, interrupts it once it is busy, and checks the exit and the folder.
  void expectCleanStop(const std::string& name, const std::vector<std::string>& args,
                       double busyCpuSeconds) {
    const std::string err =
        (fs::temp_directory_path() / ("stacklens_cli_interrupt_err_" + std::to_string(::getpid())))
            .string();
    RunningCli cli(args, err);
    ASSERT_GT(cli.pid(), 0);
    ASSERT_TRUE(cli.waitUntilBusy(busyCpuSeconds))
        << name << " ended (or never got going) before it could be interrupted: " << readText(err);
    const double seconds = cli.stopWith(SIGINT);
    const std::string messages = readText(err);
    fs::remove(err);
    ASSERT_GE(seconds, 0) << name << " did not stop";
    // For the record (not a test: it depends on the machine's load).
    std::printf("%s stopped %.3f s after SIGINT\n", name.c_str(), seconds);
    ASSERT_TRUE(WIFEXITED(cli.status())) << name << " died of signal " << WTERMSIG(cli.status());
    EXPECT_EQ(WEXITSTATUS(cli.status()), 130) << name << ": " << messages;
    EXPECT_NE(messages.find("interrupted; nothing written"), std::string::npos) << messages;
    EXPECT_TRUE(entries(dir_).empty()) << name << " left " << joined(entries(dir_));
  }

  static fs::path inputs_;
};

fs::path CliInterrupt::inputs_;

TEST_F(CliInterrupt, BlurStopsAndWritesNothing) {
  // The large stack: on the small one a blur could end between two polls of its CPU time on a
  // fast or idle machine, before it was interrupted.
  expectCleanStop(
      "blur",
      {"blur", big(), path("out.fits"), "--sigma", "12,12,12", "--nan-aware", "--backend", "cpu"},
      0.5);
}

TEST_F(CliInterrupt, MedianStopsAndWritesNothing) {
  expectCleanStop("median",
                  {"median", cube(), path("out.fits"), "--size", "41", "--backend", "cpu"}, 0.2);
}

TEST_F(CliInterrupt, OutliersStopAndWriteNothing) {
  expectCleanStop("outliers",
                  {"outliers", cube(), path("out.tif"), "--size", "41", "--threshold", "50",
                   "--backend", "cpu"},
                  0.2);
}

TEST_F(CliInterrupt, ResampleStopsAndWritesNothing) {
  expectCleanStop(
      "resample",
      {"resample", cube(), path("out.fits"), "--zoom", "4,4,4", "--order", "3", "--backend", "cpu"},
      0.2);
}

TEST_F(CliInterrupt, ConvertStopsAndWritesNothing) {
  expectCleanStop("convert", {"convert", big(), path("out.tif")}, 0.05);
}

TEST_F(CliInterrupt, ProjectStopsAndWritesNothing) {
  expectCleanStop("project",
                  {"project", big(), path("out.fits"), "--op", "median", "--backend", "cpu"}, 0.05);
}

TEST_F(CliInterrupt, MomentsStopAndWriteNothing) {
  expectCleanStop("moments",
                  {"moments", big(), path("out.fits"), "--order", "2", "--backend", "cpu"}, 0.05);
}

TEST_F(CliInterrupt, MovieStopsAndWritesNothing) {
#ifndef STACKLENS_HAVE_MOVIE
  GTEST_SKIP() << "built without FFmpeg";
#endif
  expectCleanStop("movie",
                  {"movie", cube(), path("out.mp4"), "--rotate", "2000", "--size", "1024x1024",
                   "--backend", "cpu"},
                  0.2);
}

TEST_F(CliInterrupt, PsfStopsAndWritesNothing) {
  expectCleanStop("psf",
                  {"psf", path("psf.tif"), "--model", "gibson-lanni", "--size", "513,257",
                   "--oversampling", "3"},
                  0.2);
}

TEST_F(CliInterrupt, MeasurePsfStopsAndWritesNothing) {
  expectCleanStop("measure-psf",
                  {"measure-psf", cube(), path("psf.fits"), "--mode", "3d", "--stars", "1000",
                   "--size", "31", "--size-z", "21", "--iterations", "1000000"},
                  0.2);
}

TEST_F(CliInterrupt, ProcessStopsAndWritesNothing) {
  expectCleanStop("process",
                  {"process", cube(), path("out.fits"), "--deconvolve", "100000", "--psf-sigma",
                   "2", "--segment", "5", "--backend", "cpu"},
                  0.2);
}

TEST_F(CliInterrupt, Deconvolve2dStopsAndWritesNothing) {
  expectCleanStop("deconvolve 2d",
                  {"deconvolve", cube(), path("out.fits"), "--psf-sigma", "2", "--iterations",
                   "100000", "--mode", "2d", "--backend", "cpu"},
                  0.2);
}

TEST_F(CliInterrupt, Deconvolve3dStopsAndWritesNothing) {
  expectCleanStop("deconvolve 3d",
                  {"deconvolve", cube(), path("out.tif"), "--psf-sigma", "2", "--iterations",
                   "100000", "--mode", "3d", "--backend", "cpu"},
                  0.2);
}

// SIGKILL (or the OOM killer) leaves the temporary folder of the run; the next run on the same
// output removes it, says so, and leaves everything else: another host's folder, a running
// process's folder, other names and the user's files.
// A Zarr output is a folder of chunks written while the run streams slabs: all of it goes.
TEST_F(CliInterrupt, BlurIntoZarrStopsAndWritesNothing) {
  expectCleanStop("blur into .zarr",
                  {"blur", big(), path("out.zarr"), "--sigma", "12", "--nan-aware", "--backend",
                   "cpu", "--ram-budget-mb", "128"},
                  0.5);
}

// A killed run's Zarr tree (chunks, scratch files) is removed by the next run on the output.
TEST_F(CliInterrupt, NextRunRemovesTheZarrTreeAKilledRunLeft) {
  const std::string out = path("out.zarr");
  const std::string err = path("killed.log");
  {
    RunningCli cli({"deconvolve", cube(), out, "--psf-sigma", "2", "--iterations", "100000",
                    "--mode", "3d", "--backend", "cpu"},
                   err);
    ASSERT_GT(cli.pid(), 0);
    const std::string folder = ".out.zarr.tmp-" + std::to_string(cli.pid()) + "@";
    bool appeared = false;
    for (auto started = Clock::now();
         !appeared && std::chrono::duration<double>(Clock::now() - started).count() < 120;) {
      for (const std::string& n : entries(dir_)) appeared = appeared || n.rfind(folder, 0) == 0;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ASSERT_TRUE(appeared) << joined(entries(dir_)) << readText(err);
    ASSERT_GE(cli.stopWith(SIGKILL), 0);
  }
  fs::remove(err);
  const std::vector<std::string> left = entries(dir_);
  ASSERT_EQ(left.size(), 1u) << joined(left);
  EXPECT_TRUE(fs::is_directory(path(left[0]) + "/out.zarr")) << left[0];
  const std::string log = path("next.log");
  RunningCli next({"convert", cube(), out}, log);
  ASSERT_GE(next.stopWith(0), 0);  // signal 0: only waits
  const std::string messages = readText(log);
  fs::remove(log);
  ASSERT_TRUE(WIFEXITED(next.status()));
  ASSERT_EQ(WEXITSTATUS(next.status()), 0) << messages;
  EXPECT_FALSE(fs::exists(path(left[0]))) << messages;
  EXPECT_NE(messages.find("removed the temporary folder of a run that died"), std::string::npos)
      << messages;
  EXPECT_EQ(entries(dir_), std::vector<std::string>{"out.zarr"});
}

TEST_F(CliInterrupt, NextRunRemovesWhatAKilledRunLeft) {
  const std::string out = path("out.fits");
  const std::string err = path("killed.log");
  {
    RunningCli cli({"deconvolve", cube(), out, "--psf-sigma", "2", "--iterations", "100000",
                    "--mode", "3d", "--backend", "cpu"},
                   err);
    ASSERT_GT(cli.pid(), 0);
    // The blocked run creates its output (a temporary folder) before the first block.
    const std::string folder = ".out.fits.tmp-" + std::to_string(cli.pid()) + "@";
    bool appeared = false;
    for (auto started = Clock::now();
         !appeared && std::chrono::duration<double>(Clock::now() - started).count() < 120;) {
      for (const std::string& n : entries(dir_)) appeared = appeared || n.rfind(folder, 0) == 0;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ASSERT_TRUE(appeared) << joined(entries(dir_)) << readText(err);
    ASSERT_GE(cli.stopWith(SIGKILL), 0);
    ASSERT_TRUE(WIFSIGNALED(cli.status()));
  }
  fs::remove(err);
  std::vector<std::string> left = entries(dir_);
  ASSERT_EQ(left.size(), 1u) << joined(left);
  const std::string killed = left[0];
  // What must stay: another host's folder, one of a running process (this test), an older
  // StackLens's folder, a dead process's folder holding a file of the user's, other names.
  const size_t at = killed.find('@');
  const std::string host = killed.substr(at + 1, killed.size() - 7 - at - 1);
  const std::string dead = ".out.fits.tmp-2147483646@" + host + "-ghi789";
  const std::vector<std::string> keptFolders{
      ".out.fits.tmp-1234@another-host-abc123",
      ".out.fits.tmp-" + std::to_string(::getpid()) + "@" + host + "-def456",
      ".out.fits.tmp-Ab12Cd", dead};
  const std::vector<std::string> keptFiles{"keep.txt", ".out.fits.tmp-notes"};
  for (const std::string& k : keptFolders) {
    fs::create_directory(path(k));
    std::ofstream(path(k) + "/out.fits") << "partial";
  }
  std::ofstream(path(dead) + "/notes.txt") << "mine";
  for (const std::string& k : keptFiles) std::ofstream(path(k)) << "mine";
  const std::string log = path("next.log");
  RunningCli next({"convert", cube(), out}, log);
  ASSERT_GE(next.stopWith(0), 0);  // signal 0: only waits
  const std::string messages = readText(log);
  fs::remove(log);
  ASSERT_TRUE(WIFEXITED(next.status()));
  ASSERT_EQ(WEXITSTATUS(next.status()), 0) << messages;
  EXPECT_FALSE(fs::exists(path(killed))) << messages;
  EXPECT_NE(messages.find("removed the temporary folder of a run that died"), std::string::npos)
      << messages;
  EXPECT_TRUE(fs::is_regular_file(out));
  for (const std::string& k : keptFolders) {
    EXPECT_TRUE(fs::exists(path(k) + "/out.fits")) << k << " was emptied";
    EXPECT_NE(messages.find(k), std::string::npos) << k << " not named: " << messages;
  }
  for (const std::string& k : keptFiles) EXPECT_EQ(readText(path(k)), "mine") << k;
  EXPECT_EQ(readText(path(dead) + "/notes.txt"), "mine");
}

}  // namespace
