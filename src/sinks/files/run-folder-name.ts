/**
 * A run folder's name, in one place: the run id zero-padded to 8 digits (`00000010`), so that a
 * loader reading folders in text order (a glob, `ls`) reads them in run order. Versions before
 * the downstream contract named folders by the bare run id (`10`); such a folder is still
 * recognised as the run's delivery, so an upgrade never sends a run twice.
 */

/** Digits in a run folder's name. */
export const RUN_FOLDER_DIGITS = 8;

/** @example runFolderName(10) // "00000010" */
export const runFolderName = (runId: number): string => String(runId).padStart(RUN_FOLDER_DIGITS, "0");

/** The names a run's folder may have, current first: the padded one, then the one older versions wrote. */
export const runFolderNames = (runId: number): string[] => [...new Set([runFolderName(runId), String(runId)])];
