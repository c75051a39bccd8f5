/**
 * The exit-2 errors that are not about the configuration: the arguments given on the command
 * line, and a file named there (a census, a group file, a snapshot that is not there). Each is a
 * {@link ConfigError} (the CLI exits 2 and changes nothing) headed by what the user has to fix.
 */
import { ConfigError } from "./errors.js";

/** An argument or flag that cannot be used as given (`--claims-since` after `--claims-until`, an unknown job). */
export class UsageError extends ConfigError {
  override readonly code = "USAGE";
  constructor(problems: readonly string[]) {
    super(problems, "arguments");
  }
}

/** A file named on the command line that cannot be used: not there, too big, not what it should be. */
export class InputFileError extends ConfigError {
  override readonly code = "INPUT_FILE";
  constructor(problems: readonly string[]) {
    super(problems, "file");
  }
}
