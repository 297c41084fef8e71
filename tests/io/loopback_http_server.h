// The Zarr-over-HTTP tests' server (zarr_http_server.py) run for one test program: started on
// 127.0.0.1 with a port the system picks, stopped with the program (its standard input closes).
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace stacklens::io::test {

class LoopbackHttpServer {
 public:
  explicit LoopbackHttpServer(const std::string& folder) {
    int in[2], out[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) {
      failure_ = "no pipes";
      return;
    }
    const std::string script = std::string(STACKLENS_TEST_DATA) + "/../zarr_http_server.py";
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(in[0], 0);
      ::dup2(out[1], 1);
      ::execl("/usr/bin/python3", "python3", script.c_str(), folder.c_str(), nullptr);
      ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    stdin_ = in[1];
    FILE* port = ::fdopen(out[0], "r");
    char line[32] = {};
    if (!port || !std::fgets(line, sizeof line, port) || std::atoi(line) <= 0)
      failure_ = "zarr_http_server.py did not start";
    else
      base_ = "http://127.0.0.1:" + std::to_string(std::atoi(line));
    if (port) std::fclose(port);
  }
  ~LoopbackHttpServer() {
    if (stdin_ >= 0) ::close(stdin_);
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  LoopbackHttpServer(const LoopbackHttpServer&) = delete;
  LoopbackHttpServer& operator=(const LoopbackHttpServer&) = delete;

  // The URL of path served in a mode of zarr_http_server.py ("ok", "flaky", "stall-chunks", ...).
  std::string url(const std::string& mode, const std::string& path) const {
    return base_ + "/" + mode + "/" + path;
  }
  const std::string& failure() const { return failure_; }

  // How many TCP connections the server has accepted, asked on a connection of its own (which
  // the server does not count); -1 when it does not answer.
  int connectionsAccepted() const {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(uint16_t(std::atoi(base_.c_str() + base_.rfind(':') + 1)));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    std::string answer;
    const char request[] =
        "GET /connections HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
        ::write(fd, request, sizeof request - 1) == ssize_t(sizeof request - 1)) {
      char buffer[4096];
      for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;)
        answer.append(buffer, size_t(n));
    }
    ::close(fd);
    const size_t body = answer.find("\r\n\r\n");
    if (answer.compare(0, 12, "HTTP/1.0 200") != 0 && answer.compare(0, 12, "HTTP/1.1 200") != 0)
      return -1;
    return body == std::string::npos ? -1 : std::atoi(answer.c_str() + body + 4);
  }

 private:
  pid_t pid_ = -1;
  int stdin_ = -1;
  std::string base_, failure_;
};

}  // namespace stacklens::io::test
