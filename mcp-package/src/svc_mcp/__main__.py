from svc_mcp.server import main

main()
