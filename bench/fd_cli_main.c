/* Stand-alone driver of `hpmg solve --disc fd` for machines where the rest of
 * hpmg cannot be built (scripts/gpu-check-fd falls back to it): argv[1] is
 * the command ("solve"), as for hpmg. */
int hpmg_cli_fd(int argc, char **argv);
int main(int argc, char **argv) { return hpmg_cli_fd(argc, argv); }
