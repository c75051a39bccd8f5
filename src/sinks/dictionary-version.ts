/** Placeholder until the data dictionary lands. */
export const DICTIONARY_VERSION = "000000000000";
