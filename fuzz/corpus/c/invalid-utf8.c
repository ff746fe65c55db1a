/* ÿþ */
int f(void) { return "Ã"[0]; }
