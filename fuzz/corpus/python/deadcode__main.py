from app.core import used, Store


def main():
    store = Store()
    store.add(used(1))
    return len(store)


if __name__ == "__main__":
    main()
