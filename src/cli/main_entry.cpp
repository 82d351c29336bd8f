// fsimg's main(): the process-wide settings, then the command line (main.cpp).
#include <csignal>

#include "common.hpp"

int main(int argc, char** argv) {
    // Past a file-size limit, let writes fail with EFBIG (reported, temporary
    // file removed) instead of the process being killed by SIGXFSZ.
    std::signal(SIGXFSZ, SIG_IGN);
    return fsimg::cli::run_cli(argc, argv);
}
