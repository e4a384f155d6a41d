from gradfix.cli.main import main

main()
