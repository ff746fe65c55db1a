class Base:
    def save(self):
        return True


class Model(Base):
    def validate(self):
        return self.save()
