/* main.c — never built successfully: the project exists to fail (see
 * CMakeLists.txt). */
int main(void) { return 0; }
