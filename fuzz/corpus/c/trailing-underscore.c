int lua_f(void) { return 0; }
int lua_f_(void) { return lua_f(); }
